/*-------------------------------------------------------------------------
 *
 * proxy.c
 *	  jobq-web's proxy authentication (--auth proxy:HEADER): an
 *	  authenticating reverse proxy (oauth2-proxy, a web server's own login)
 *	  names the user in a request header, and jobq-web believes that header
 *	  only on connections from the addresses of --trusted-proxy (ADDR or
 *	  ADDR/BITS, IPv4 or IPv6; an IPv4 client seen on an IPv6 socket as
 *	  ::ffff:a.b.c.d counts as a.b.c.d).  A connection from anywhere else is
 *	  refused whatever it sends: reaching jobq-web around the proxy must not
 *	  be a way in.
 *
 *	  Which PostgreSQL role a proxy user acts as comes from --proxy-roles
 *	  FILE, lines "user:role" ('#' comments; the user "*" is everyone else);
 *	  a user the file does not name, with no "*" line, is refused.  Without
 *	  the file every proxy user runs as the connection's own role.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/proxy.c
 *
 *-------------------------------------------------------------------------
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "web.h"

#define MAX_PROXIES 16
#define MAX_ROLES 256

typedef struct Net
{
	int			family;			/* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int			bits;
} Net;

static Net	proxies[MAX_PROXIES];
static int	nproxies;
static WebUser roles[MAX_ROLES];
static int	nroles;
static int	roles_loaded;

/* ADDR or ADDR/BITS; 0 when added, else -1 with the reason in err */
int
web_proxy_add(const char *spec, char *err, size_t errlen)
{
	char		addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(spec, '/');
	size_t		alen = slash ? (size_t) (slash - spec) : strlen(spec);
	Net		   *n;
	int			max;

	if (nproxies == MAX_PROXIES)
	{
		snprintf(err, errlen, "--trusted-proxy: at most %d", MAX_PROXIES);
		return -1;
	}
	n = &proxies[nproxies];
	if (alen == 0 || alen >= sizeof(addr))
		goto bad;
	memcpy(addr, spec, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, n->addr) == 1)
		n->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, n->addr) == 1)
		n->family = AF_INET6;
	else
		goto bad;
	max = n->family == AF_INET ? 32 : 128;
	n->bits = max;
	if (slash != NULL)
	{
		char	   *end;
		long		b = strtol(slash + 1, &end, 10);

		if (slash[1] == '\0' || *end != '\0' || b < 0 || b > max)
			goto bad;
		n->bits = (int) b;
	}
	nproxies++;
	return 0;

bad:
	snprintf(err, errlen, "--trusted-proxy must be an IP address or ADDR/BITS, not \"%s\"", spec);
	return -1;
}

int
web_proxy_count(void)
{
	return nproxies;
}

static int
prefix_equal(const unsigned char *a, const unsigned char *b, int bits)
{
	int			bytes = bits / 8;
	int			rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return 0;
	return rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff << (8 - rest))) == 0;
}

/* 1 when the connection comes from a --trusted-proxy address */
int
web_proxy_trusted(const struct sockaddr *sa)
{
	unsigned char a[16];
	int			family;

	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET)
	{
		family = AF_INET;
		memcpy(a, &((const struct sockaddr_in *) sa)->sin_addr, 4);
	}
	else if (sa->sa_family == AF_INET6)
	{
		const struct in6_addr *in6 = &((const struct sockaddr_in6 *) sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(in6))
		{
			family = AF_INET;
			memcpy(a, in6->s6_addr + 12, 4);
		}
		else
		{
			family = AF_INET6;
			memcpy(a, in6->s6_addr, 16);
		}
	}
	else
		return 0;
	for (int i = 0; i < nproxies; i++)
		if (proxies[i].family == family && prefix_equal(a, proxies[i].addr, proxies[i].bits))
			return 1;
	return 0;
}

/* --proxy-roles FILE: lines user:role */
int
web_proxy_roles_load(const char *path, char *err, size_t errlen)
{
	FILE	   *f = fopen(path, "r");
	char		line[512];
	int			lineno = 0;

	if (f == NULL)
	{
		snprintf(err, errlen, "cannot read the proxy roles file \"%s\": %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL)
	{
		char	   *colon;
		size_t		len = strcspn(line, "\r\n");

		lineno++;
		line[len] = '\0';
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		colon = strchr(line, ':');
		if (colon == NULL || colon == line || strchr(colon + 1, ':') != NULL ||
			(size_t) (colon - line) >= sizeof(roles[0].name) ||
			strlen(colon + 1) >= sizeof(roles[0].role) || nroles == MAX_ROLES)
		{
			snprintf(err, errlen, "%s:%d: a line must be user:role (at most %d users)",
					 path, lineno, MAX_ROLES);
			fclose(f);
			return -1;
		}
		/* both lengths were checked above */
		memcpy(roles[nroles].name, line, colon - line);
		roles[nroles].name[colon - line] = '\0';
		memcpy(roles[nroles].role, colon + 1, strlen(colon + 1) + 1);
		nroles++;
	}
	fclose(f);
	roles_loaded = 1;
	return 0;
}

/*
 * The user a trusted proxy named: 1 and user filled; 0 when the header is
 * missing or empty; -1 when --proxy-roles gives the user no role.
 */
int
web_proxy_user(const char *name, WebUser *user)
{
	const WebUser *star = NULL;

	if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof(user->name))
		return 0;
	snprintf(user->name, sizeof(user->name), "%s", name);
	user->role[0] = '\0';
	if (!roles_loaded)
		return 1;
	for (int i = 0; i < nroles; i++)
	{
		if (strcmp(roles[i].name, name) == 0)
		{
			snprintf(user->role, sizeof(user->role), "%s", roles[i].role);
			return 1;
		}
		if (strcmp(roles[i].name, "*") == 0)
			star = &roles[i];
	}
	if (star == NULL)
		return -1;
	snprintf(user->role, sizeof(user->role), "%s", star->role);
	return 1;
}
