/*-------------------------------------------------------------------------
 *
 * web_embed.c
 *	  libjobq-web in a program of its own: a libmicrohttpd daemon that
 *	  serves its own page at / and jobq's dashboard under /jobq/.
 *
 *	  web_embed CONNINFO PORT      (listens on 127.0.0.1:PORT; 0 = any)
 *
 *	  Build: cc web_embed.c -ljobq-web -ljobq -lpq -lmicrohttpd -lgnutls
 *	         -lcrypt -pthread (client/Makefile builds it as examples/web_embed).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/examples/web_embed.c
 *
 *-------------------------------------------------------------------------
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "jobq-web.h"

static const char page[] = "<!doctype html><title>app</title><p>the application's own page</p>\n";

/* the application's router: /jobq and below to the dashboard, the rest its own */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (strncmp(url, "/jobq", 5) == 0 && (url[5] == '/' || url[5] == '\0'))
		return jobq_web_handle(cls, c, url, method, version, upload_data, upload_data_size,
							   con_cls);
	r = MHD_create_response_from_buffer(strlen(page), (void *) page, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

int
main(int argc, char **argv)
{
	JobqWebOptions o;
	char		err[512];
	struct sockaddr_in sa = {0};
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	sigset_t	set;
	int			sig;

	if (argc != 3)
	{
		fprintf(stderr, "usage: web_embed CONNINFO PORT\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.conninfo = argv[1];
	o.prefix = "/jobq";
	o.connections = 2;
	if (jobq_web_start(&o, err, sizeof(err)) != 0)
	{
		fprintf(stderr, "web_embed: %s\n", err);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t) atoi(argv[2]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* jobq's requests may wait on the database: a thread pool, as jobq-web has */
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
						 handle, NULL,
						 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &sa,
						 MHD_OPTION_THREAD_POOL_SIZE, 2u,
						 MHD_OPTION_NOTIFY_COMPLETED, jobq_web_completed, NULL,
						 MHD_OPTION_END);
	if (d == NULL)
	{
		fprintf(stderr, "web_embed: cannot listen\n");
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("web_embed listening on http://127.0.0.1:%d/ (dashboard at /jobq/)\n", info ? (int) info->port : 0);
	fflush(stdout);
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	return 0;
}
