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
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "jobq-client.h"
#include "jobq-common.h"
#include "web.h"


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
	"      --auth=MODE            none (loopback only; the default), basic:FILE\n"
	"                             (lines user:crypt-hash:role) or proxy:HEADER\n"
	"                             (the user a trusted proxy names in HEADER)\n"
	"      --trusted-proxy=ADDR[/BITS]  with --auth proxy: the proxy's address;\n"
	"                             requests from anywhere else are refused (repeatable)\n"
	"      --proxy-roles=FILE     with --auth proxy: lines user:role (\"*\" for\n"
	"                             everyone else); without it, the connection's role\n"
	"      --tls-cert=FILE        serve HTTPS with this PEM certificate (chain)...\n"
	"      --tls-key=FILE         ... and this PEM private key"
	"      --trusted-origin=ORIGIN  also accept unsafe requests whose Origin is\n"
	"                             ORIGIN, e.g. https://jobs.example.com (repeatable)\n"
	"      --prefix=PATH          serve under PATH, e.g. /jobq behind a proxy\n"
	"      --read-only            no actions: every unsafe method is refused\n"
	"      --query-timeout=DURATION  statement timeout of every query (default 5s)\n"
	"      --min-refresh=DURATION  a read is answered from the cache this long\n"
	"                             (default 2s): one query per endpoint however\n"
	"                             many clients poll\n"
	"      --rate-limits=READS,ACTIONS,ENQUEUES  requests a second per client\n"
	"                             address, each RATE[/BURST] (burst: 10 x rate;\n"
	"                             0: no limit; default 20/200,5/60,20/200)\n"
	"      --threads=N            HTTP threads and database connections, 1..32\n"
	"                             (default 4)\n"
	"      --healthcheck          ask the jobq-web at --listen (and --prefix)\n"
	"                             whether it is ready: exit 0 if so, else 1\n"
	"  -h, --help                 show this help, then exit\n"
	"  -V, --version              show the version, then exit\n"
	"\n"
	JOBQ_DURATION_HELP;

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

/*
 * --rate-limits=READS,ACTIONS,ENQUEUES, each RATE[/BURST]: requests a
 * second per client address (0: no limit) and the bucket's size (default
 * ten seconds' worth, at least 1)
 */
static void
parse_rate_limits(const char *v)
{
	const char *p = v;

	for (int k = 0; k < WEB_RATE__COUNT; k++)
	{
		char	   *end;
		double		rate = strtod(p, &end);
		double		burst;

		if (end == p || rate < 0 || rate > 1e6)
			goto bad;
		burst = rate * 10 < 1 ? 1 : rate * 10;
		if (*end == '/')
		{
			p = end + 1;
			burst = strtod(p, &end);
			if (end == p || burst < 1 || burst > 1e7)
				goto bad;
		}
		if (*end != (k == WEB_RATE__COUNT - 1 ? '\0' : ','))
			goto bad;
		web_config.rate[k] = rate;
		web_config.burst[k] = burst;
		p = end + 1;
	}
	return;
bad:
	die2("--rate-limits must be READS,ACTIONS,ENQUEUES, each RATE[/BURST] (RATE 0 .. 1000000 a "
		 "second, 0 = no limit; BURST at least 1), not \"%s\"", v);
}

/* a PEM file whole (at most 1 MB), NUL-terminated; NULL after saying why */
static char *
read_pem(const char *opt, const char *path)
{
	FILE	   *f = fopen(path, "r");
	char	   *buf;
	size_t		n;

	if (f == NULL)
	{
		fprintf(stderr, "jobq-web: %s: cannot read \"%s\": %s\n", opt, path, strerror(errno));
		return NULL;
	}
	buf = jobq_xmalloc(1024 * 1024 + 1);
	n = fread(buf, 1, 1024 * 1024 + 1, f);
	fclose(f);
	buf[n <= 1024 * 1024 ? n : 0] = '\0';
	if (n == 0 || n > 1024 * 1024 || strstr(buf, "-----BEGIN ") == NULL)
	{
		fprintf(stderr, "jobq-web: %s: \"%s\" is not a PEM file of at most 1 MB\n", opt, path);
		free(buf);
		return NULL;
	}
	return buf;
}

int
main(int argc, char **argv)
{
	enum
	{
		O_SCHEMA = 256, O_AUTH, O_PREFIX, O_READ_ONLY, O_QUERY_TIMEOUT, O_MIN_REFRESH,
		O_THREADS, O_HEALTHCHECK, O_TRUSTED_ORIGIN, O_TRUSTED_PROXY, O_PROXY_ROLES,
		O_TLS_CERT, O_TLS_KEY, O_RATE_LIMITS
	};
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"schema", required_argument, NULL, O_SCHEMA},
		{"listen", required_argument, NULL, 'l'},
		{"auth", required_argument, NULL, O_AUTH},
		{"trusted-origin", required_argument, NULL, O_TRUSTED_ORIGIN},
		{"trusted-proxy", required_argument, NULL, O_TRUSTED_PROXY},
		{"proxy-roles", required_argument, NULL, O_PROXY_ROLES},
		{"tls-cert", required_argument, NULL, O_TLS_CERT},
		{"tls-key", required_argument, NULL, O_TLS_KEY},
		{"rate-limits", required_argument, NULL, O_RATE_LIMITS},
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
	const char *proxy_roles = NULL;
	char	   *tls_cert = NULL;
	char	   *tls_key = NULL;
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
	web_config_defaults();
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
			case O_TRUSTED_PROXY:
				if (web_proxy_add(optarg, err, sizeof(err)) != 0)
					die2("%s", err);
				break;
			case O_PROXY_ROLES:
				proxy_roles = optarg;
				break;
			case O_TLS_CERT:
				web_config.tls_cert = optarg;
				break;
			case O_TLS_KEY:
				web_config.tls_key = optarg;
				break;
			case O_RATE_LIMITS:
				parse_rate_limits(optarg);
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
	if ((web_config.tls_cert == NULL) != (web_config.tls_key == NULL))
		die2("--tls-cert and --tls-key go together");
	if (check)
		return web_healthcheck(&ss, sslen);

	if (strncmp(auth, "basic:", 6) == 0 && auth[6] != '\0')
		web_config.auth_file = auth + 6;
	else if (strncmp(auth, "proxy:", 6) == 0 && auth[6] != '\0')
	{
		/* a header name: an HTTP token */
		if (strlen(auth + 6) > 64 ||
			strspn(auth + 6, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
			!= strlen(auth + 6))
			die2("--auth proxy:HEADER: \"%s\" is not a header name", auth + 6);
		web_config.proxy_header = auth + 6;
		if (web_proxy_count() == 0)
			die2("--auth proxy:%s needs --trusted-proxy: the address of the proxy whose "
				 "header is believed", auth + 6);
	}
	else if (strcmp(auth, "none") != 0)
		die2("--auth must be none, basic:FILE or proxy:HEADER, not \"%s\"", auth);
	if (web_config.proxy_header == NULL && (web_proxy_count() > 0 || proxy_roles != NULL))
		die2("--trusted-proxy and --proxy-roles go with --auth proxy:HEADER");
	if (web_config.auth_file == NULL && web_config.proxy_header == NULL && !web_config.loopback)
		die2("refusing to listen on %s without authentication: use --auth basic:FILE or "
			 "proxy:HEADER (or listen on a loopback address)", web_config.listen_host);
	if (web_config.auth_file != NULL && web_auth_load(web_config.auth_file, err, sizeof(err)) != 0)
		die2("%s", err);
	if (proxy_roles != NULL && web_proxy_roles_load(proxy_roles, err, sizeof(err)) != 0)
		die2("%s", err);
	if (web_config.tls_cert != NULL)
	{
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
			die2("--tls-cert: this libmicrohttpd has no TLS");
		if ((tls_cert = read_pem("--tls-cert", web_config.tls_cert)) == NULL ||
			(tls_key = read_pem("--tls-key", web_config.tls_key)) == NULL)
			return 1;
	}
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
	/* without TLS the key and certificate options are the list's end */
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
						 (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
						 (tls_cert != NULL ? MHD_USE_TLS : 0),
						 (uint16_t) web_config.listen_port, NULL, NULL,
						 web_http_handle, NULL,
						 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
						 MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) web_config.threads,
						 MHD_OPTION_CONNECTION_LIMIT, (unsigned int) WEB_CONN_LIMIT,
						 MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int) WEB_PER_IP_LIMIT,
						 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) WEB_CONN_TIMEOUT_S,
						 MHD_OPTION_NOTIFY_COMPLETED, web_http_completed, NULL,
						 tls_cert != NULL ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, tls_key,
						 MHD_OPTION_HTTPS_MEM_CERT, tls_cert,
						 MHD_OPTION_END);
	if (d == NULL)
	{
		fprintf(stderr, "jobq-web: cannot listen on %s: %s\n", listen_arg, strerror(errno));
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	web_log("info", "listening on %s://%s%s%s:%d%s/ (auth %s%s)",
			tls_cert != NULL ? "https" : "http",
			ss.ss_family == AF_INET6 ? "[" : "", web_config.listen_host,
			ss.ss_family == AF_INET6 ? "]" : "",
			info ? (int) info->port : web_config.listen_port, web_config.prefix,
			web_config.auth_file ? "basic" : web_config.proxy_header ? "proxy" : "none",
			web_config.read_only ? ", read-only" : "");

	if (sigwait(&stopset, &sig) != 0)
		sig = 0;
	web_log("info", "stopping on signal %d", sig);
	MHD_stop_daemon(d);
	return 0;
}
