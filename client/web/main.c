/*-------------------------------------------------------------------------
 *
 * main.c
 *	  jobq-web: the operator's dashboard of jobq, an HTTP daemon serving a
 *	  JSON API and a single-page UI (doc/jobq-web.md).  This file parses
 *	  the options, refuses an unsafe configuration (a non-loopback listen
 *	  without authentication), connects, and runs libmicrohttpd until
 *	  SIGINT or SIGTERM; --healthcheck asks a running jobq-web instead.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/main.c
 *
 *-------------------------------------------------------------------------
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "jobq-client.h"
#include "jobq-common.h"
#include "web.h"

WebConfig	web_config;

static const char usage_text[] =
	"jobq-web serves jobq's dashboard: a JSON API and a web UI.\n"
	"\n"
	"Usage:\n"
	"  jobq-web [OPTION]...\n"
	"\n"
	"Options:\n"
	"  -d, --dbname=CONNINFO      database connection string (default: PG* environment)\n"
	"      --schema=SCHEMA        schema of the jobq functions (default: public)\n"
	"  -l, --listen=ADDR:PORT     where to listen (default 127.0.0.1:8411; port 0:\n"
	"                             any free port, printed at start)\n"
	"      --auth=MODE            none (loopback only; the default) or basic:FILE\n"
	"                             (lines user:crypt-hash:role)\n"
	"      --trusted-origin=ORIGIN  also accept unsafe requests whose Origin is\n"
	"                             ORIGIN, e.g. https://jobs.example.com (repeatable)\n"
	"      --prefix=PATH          serve under PATH, e.g. /jobq behind a proxy\n"
	"      --read-only            no actions: every unsafe method is refused\n"
	"      --query-timeout=DURATION  statement timeout of every query (default 5s)\n"
	"      --min-refresh=DURATION  a read is answered from the cache this long\n"
	"                             (default 2s): one query per endpoint however\n"
	"                             many clients poll\n"
	"      --threads=N            HTTP threads and database connections, 1..32\n"
	"                             (default 4)\n"
	"      --healthcheck          ask the jobq-web at --listen (and --prefix)\n"
	"                             whether it is ready: exit 0 if so, else 1\n"
	"  -h, --help                 show this help, then exit\n"
	"  -V, --version              show the version, then exit\n"
	"\n"
	JOBQ_DURATION_HELP;

void
web_log(const char *level, const char *fmt,...)
{
	char		ts[32];
	char		line[2048];
	struct timeval tv;
	struct tm	tm;
	va_list		ap;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write per line, so threads do not interleave */
	fprintf(stderr, "%s.%03dZ jobq-web %s: %s\n", ts, (int) (tv.tv_usec / 1000), level, line);
}

static void
die2(const char *fmt,...)
{
	va_list		ap;

	fputs("jobq-web: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry \"jobq-web --help\" for more information.\n", stderr);
	exit(2);
}

static int
duration_ms(const char *opt, const char *v, double min_s, double max_s)
{
	double		s;

	if (jobq_parse_duration(v, 0, &s) != 0 || s < min_s || s > max_s)
		die2("%s must be a duration from %g s to %g s, not \"%s\"", opt, min_s, max_s, v);
	return (int) (s * 1000 + 0.5);
}

/* ADDR:PORT, [V6]:PORT or :PORT into the config; the address resolved */
static void
parse_listen(const char *v, struct sockaddr_storage *ss, socklen_t *sslen)
{
	char		host[256];
	const char *colon = strrchr(v, ':');
	char	   *end;
	long		port;
	struct addrinfo hints,
			   *ai;
	size_t		hlen;

	if (colon == NULL)
		die2("--listen must be ADDR:PORT, not \"%s\"", v);
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535)
		die2("--listen: the port must be 0..65535, not \"%s\"", colon + 1);
	hlen = colon - v;
	if (hlen >= 2 && v[0] == '[' && v[hlen - 1] == ']')
	{
		v++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		die2("--listen: the address is too long");
	memcpy(host, v, hlen);
	host[hlen] = '\0';
	if (hlen == 0)
		snprintf(host, sizeof(host), "0.0.0.0");
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(host, NULL, &hints, &ai) != 0 || ai == NULL)
		die2("--listen: cannot resolve \"%s\"", host);
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET)
	{
		struct sockaddr_in *sin = (struct sockaddr_in *) ss;

		sin->sin_port = htons((uint16_t) port);
		web_config.loopback = (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	}
	else
	{
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) ss;

		sin6->sin6_port = htons((uint16_t) port);
		web_config.loopback = IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	}
	snprintf(web_config.listen_host, sizeof(web_config.listen_host), "%s", host);
	web_config.listen_port = (int) port;
}

/* --healthcheck: GET PREFIX/readyz from the running jobq-web */
static int
healthcheck(const struct sockaddr_storage *ss, socklen_t sslen)
{
	int			fd = socket(ss->ss_family, SOCK_STREAM, 0);
	char		req[1024];
	char		resp[64] = {0};
	struct timeval tv = {5, 0};
	ssize_t		n;

	if (fd < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (const struct sockaddr *) ss, sslen) != 0)
	{
		fprintf(stderr, "jobq-web: cannot connect to %s:%d: %s\n", web_config.listen_host,
				web_config.listen_port, strerror(errno));
		close(fd);
		return 1;
	}
	snprintf(req, sizeof(req), "GET %s/readyz HTTP/1.0\r\nHost: %s\r\n\r\n",
			 web_config.prefix, web_config.listen_host);
	if (write(fd, req, strlen(req)) != (ssize_t) strlen(req))
	{
		close(fd);
		return 1;
	}
	n = read(fd, resp, sizeof(resp) - 1);
	close(fd);
	if (n > 12 && strncmp(resp, "HTTP/1.", 7) == 0 && strncmp(resp + 9, "200", 3) == 0)
		return 0;
	fprintf(stderr, "jobq-web: not ready\n");
	return 1;
}

int
main(int argc, char **argv)
{
	enum
	{
		O_SCHEMA = 256, O_AUTH, O_PREFIX, O_READ_ONLY, O_QUERY_TIMEOUT, O_MIN_REFRESH,
		O_THREADS, O_HEALTHCHECK, O_TRUSTED_ORIGIN
	};
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"schema", required_argument, NULL, O_SCHEMA},
		{"listen", required_argument, NULL, 'l'},
		{"auth", required_argument, NULL, O_AUTH},
		{"trusted-origin", required_argument, NULL, O_TRUSTED_ORIGIN},
		{"prefix", required_argument, NULL, O_PREFIX},
		{"read-only", no_argument, NULL, O_READ_ONLY},
		{"query-timeout", required_argument, NULL, O_QUERY_TIMEOUT},
		{"min-refresh", required_argument, NULL, O_MIN_REFRESH},
		{"threads", required_argument, NULL, O_THREADS},
		{"healthcheck", no_argument, NULL, O_HEALTHCHECK},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *listen_arg = "127.0.0.1:8411";
	const char *auth = "none";
	int			check = 0;
	int			opt;
	struct sockaddr_storage ss;
	socklen_t	sslen;
	char		err[512];
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	sigset_t	stopset;
	int			sig;

	jobq_set_progname("jobq-web");
	web_config.query_timeout_ms = 5000;
	web_config.min_refresh_ms = 2000;
	web_config.threads = 4;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":d:l:hV", longopts, NULL)) != -1)
	{
		switch (opt)
		{
			case 'd':
				web_config.conninfo = optarg;
				break;
			case O_SCHEMA:
				if (!jobq_valid_schema_name(optarg))
					die2("--schema: invalid schema name \"%s\"", optarg);
				web_config.schema = optarg;
				break;
			case 'l':
				listen_arg = optarg;
				break;
			case O_AUTH:
				auth = optarg;
				break;
			case O_TRUSTED_ORIGIN:
				if (web_config.ntrusted_origins == WEB_MAX_TRUSTED_ORIGINS)
					die2("--trusted-origin: at most %d", WEB_MAX_TRUSTED_ORIGINS);
				if (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0)
					die2("--trusted-origin must be http://HOST[:PORT] or https://HOST[:PORT], "
						 "not \"%s\"", optarg);
				web_config.trusted_origins[web_config.ntrusted_origins++] = optarg;
				break;
			case O_PREFIX:
				{
					size_t		len = strlen(optarg);

					while (len > 0 && optarg[len - 1] == '/')
						len--;
					if (len >= sizeof(web_config.prefix) ||
						(len > 0 && optarg[0] != '/') ||
						strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
							   "0123456789/_.-") < len || strstr(optarg, "..") != NULL)
						die2("--prefix must be a path like /jobq (letters, digits, / _ . -), "
							 "not \"%s\"", optarg);
					memcpy(web_config.prefix, optarg, len);
					web_config.prefix[len] = '\0';
				}
				break;
			case O_READ_ONLY:
				web_config.read_only = 1;
				break;
			case O_QUERY_TIMEOUT:
				web_config.query_timeout_ms = duration_ms("--query-timeout", optarg, 0.001, 3600);
				break;
			case O_MIN_REFRESH:
				web_config.min_refresh_ms = duration_ms("--min-refresh", optarg, 0, 3600);
				break;
			case O_THREADS:
				{
					char	   *end;
					long		n = strtol(optarg, &end, 10);

					if (*optarg == '\0' || *end != '\0' || n < 1 || n > 32)
						die2("--threads must be a whole number between 1 and 32, not \"%s\"",
							 optarg);
					web_config.threads = (int) n;
				}
				break;
			case O_HEALTHCHECK:
				check = 1;
				break;
			case 'h':
				fputs(usage_text, stdout);
				return 0;
			case 'V':
				printf("jobq-web (jobq) %s\n", jobq_version());
				return 0;
			case ':':
				die2("option %s needs a value", argv[optind - 1]);
				break;
			default:
				die2("unknown option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die2("unexpected argument \"%s\"", argv[optind]);

	parse_listen(listen_arg, &ss, &sslen);
	if (check)
		return healthcheck(&ss, sslen);

	if (strncmp(auth, "basic:", 6) == 0 && auth[6] != '\0')
		web_config.auth_file = auth + 6;
	else if (strcmp(auth, "none") != 0)
		die2("--auth must be none or basic:FILE, not \"%s\"", auth);
	if (web_config.auth_file == NULL && !web_config.loopback)
		die2("refusing to listen on %s without authentication: use --auth basic:FILE "
			 "(or listen on a loopback address)", web_config.listen_host);
	if (web_config.auth_file != NULL && web_auth_load(web_config.auth_file, err, sizeof(err)) != 0)
		die2("%s", err);
	if (web_http_init() != 0)
	{
		fprintf(stderr, "jobq-web: the UI's index.html is missing from the build\n");
		return 1;
	}
	if (web_db_init(web_config.threads, err, sizeof(err)) != 0)
	{
		/* at start a database that is not there is an error; later, a 503 */
		fprintf(stderr, "jobq-web: %s\n", err);
		return 1;
	}

	/* the signals go to sigwait below, never to an HTTP thread */
	sigemptyset(&stopset);
	sigaddset(&stopset, SIGINT);
	sigaddset(&stopset, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stopset, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
						 (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
						 (uint16_t) web_config.listen_port, NULL, NULL,
						 web_http_handle, NULL,
						 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
						 MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) web_config.threads,
						 MHD_OPTION_CONNECTION_LIMIT, (unsigned int) WEB_CONN_LIMIT,
						 MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int) WEB_PER_IP_LIMIT,
						 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) WEB_CONN_TIMEOUT_S,
						 MHD_OPTION_NOTIFY_COMPLETED, web_http_completed, NULL,
						 MHD_OPTION_END);
	if (d == NULL)
	{
		fprintf(stderr, "jobq-web: cannot listen on %s: %s\n", listen_arg, strerror(errno));
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	web_log("info", "listening on http://%s%s%s:%d%s/ (auth %s%s)",
			ss.ss_family == AF_INET6 ? "[" : "", web_config.listen_host,
			ss.ss_family == AF_INET6 ? "]" : "",
			info ? (int) info->port : web_config.listen_port, web_config.prefix,
			web_config.auth_file ? "basic" : "none", web_config.read_only ? ", read-only" : "");

	if (sigwait(&stopset, &sig) != 0)
		sig = 0;
	web_log("info", "stopping on signal %d", sig);
	MHD_stop_daemon(d);
	return 0;
}
