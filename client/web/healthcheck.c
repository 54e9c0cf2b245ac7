/*-------------------------------------------------------------------------
 *
 * healthcheck.c
 *	  jobq-web --healthcheck: ask a running jobq-web for PREFIX/readyz and
 *	  exit 0 when it answers 200, else 1 (for containers without curl).
 *	  With --tls-cert it speaks TLS (GnuTLS, as the daemon does); it does
 *	  not check the certificate, since it asks its own process on an
 *	  address it was given, and learns nothing but a status line.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/healthcheck.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "web.h"

/* one request and the start of its answer over TLS; -1 on failure */
static ssize_t
tls_exchange(int fd, const char *req, char *resp, size_t size)
{
	gnutls_session_t s;
	gnutls_certificate_credentials_t cred;
	ssize_t		n = -1;
	int			rc;

	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return -1;
	if (gnutls_init(&s, GNUTLS_CLIENT) < 0)
	{
		gnutls_certificate_free_credentials(cred);
		return -1;
	}
	if (gnutls_set_default_priority(s) >= 0 &&
		gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) >= 0)
	{
		gnutls_transport_set_int(s, fd);
		gnutls_handshake_set_timeout(s, GNUTLS_DEFAULT_HANDSHAKE_TIMEOUT);
		do
			rc = gnutls_handshake(s);
		while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
		if (rc < 0)
			fprintf(stderr, "jobq-web: TLS handshake failed: %s\n", gnutls_strerror(rc));
		else if (gnutls_record_send(s, req, strlen(req)) == (ssize_t) strlen(req))
			n = gnutls_record_recv(s, resp, size);
		gnutls_bye(s, GNUTLS_SHUT_WR);
	}
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	return n;
}

int
web_healthcheck(const struct sockaddr_storage *ss, socklen_t sslen)
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
	if (web_config.tls_cert != NULL)
		n = tls_exchange(fd, req, resp, sizeof(resp) - 1);
	else if (write(fd, req, strlen(req)) != (ssize_t) strlen(req))
		n = -1;
	else
		n = read(fd, resp, sizeof(resp) - 1);
	close(fd);
	if (n > 12 && strncmp(resp, "HTTP/1.", 7) == 0 && strncmp(resp + 9, "200", 3) == 0)
		return 0;
	fprintf(stderr, "jobq-web: not ready\n");
	return 1;
}
