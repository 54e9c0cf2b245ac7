/*-------------------------------------------------------------------------
 *
 * auth.c
 *	  jobq-web's Basic authentication: the users file (one line per user,
 *	  "user:crypt(3)-hash:role", '#' comments), the check of an
 *	  Authorization header against it, and the per-address failure limit
 *	  (at most WEB_AUTH_FAILURES_PER_MIN wrong credentials a minute; then
 *	  429 until the minute is over, whatever the password; a request with
 *	  no Authorization header at all is a 401 that does not count).
 *
 *	  The hash is compared in constant time, and an unknown user costs the
 *	  same crypt() as a known one, so neither timing nor the answer tells
 *	  which users exist.  crypt_r keeps the threads apart.  A header that
 *	  passed is remembered for a minute (compared in constant time too), so
 *	  a polling browser does not cost one crypt() per request.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/auth.c
 *
 *-------------------------------------------------------------------------
 */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "web.h"

#define MAX_USERS 256
#define MAX_HASH 256
#define LIMIT_SLOTS 1024
#define VERIFIED_SLOTS 64
#define VERIFIED_SECONDS 60

typedef struct User
{
	WebUser		u;
	char		hash[MAX_HASH];
} User;

static User users[MAX_USERS];
static int	nusers;
/* what an unknown user is checked against (a SHA-512 crypt of nothing) */
static char dummy_hash[MAX_HASH];

typedef struct Failures
{
	char		ip[64];
	time_t		window;			/* the start of its minute */
	int			count;
} Failures;

static Failures failures[LIMIT_SLOTS];
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

/* Authorization headers that passed recently, and whose they were */
typedef struct Verified
{
	char		header[512];
	const User *user;
	time_t		until;
} Verified;

static Verified verified[VERIFIED_SLOTS];
static pthread_mutex_t verified_lock = PTHREAD_MUTEX_INITIALIZER;

static int
valid_name(const char *s, size_t len, size_t max)
{
	if (len == 0 || len >= max)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char) s[i] <= ' ' || s[i] == ':' || (unsigned char) s[i] == 0x7f)
			return 0;
	return 1;
}

int
web_auth_load(const char *path, char *err, size_t errlen)
{
	FILE	   *f = fopen(path, "r");
	char		line[1024];
	int			lineno = 0;
	struct crypt_data cd;

	if (f == NULL)
	{
		snprintf(err, errlen, "cannot open the users file \"%s\": %s", path, strerror(errno));
		return -1;
	}
	nusers = 0;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		char	   *c1,
				   *c2,
				   *end;
		User	   *u;

		lineno++;
		end = line + strcspn(line, "\r\n");
		*end = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		c1 = strchr(line, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		/* the hash has no ':' (crypt's alphabet is [./0-9A-Za-z$]) */
		if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':') != NULL ||
			!valid_name(line, c1 - line, sizeof(users[0].u.name)) ||
			c2 - c1 - 1 <= 0 || (size_t) (c2 - c1 - 1) >= MAX_HASH ||
			(c1[1] != '$') ||
			(c2[1] != '\0' && !valid_name(c2 + 1, strlen(c2 + 1), sizeof(users[0].u.role))))
		{
			snprintf(err, errlen, "%s:%d: not \"user:crypt-hash:role\" (a hash from "
					 "\"openssl passwd -6\" or mkpasswd, the role may be empty)", path, lineno);
			fclose(f);
			return -1;
		}
		if (nusers == MAX_USERS)
		{
			snprintf(err, errlen, "%s: more than %d users", path, MAX_USERS);
			fclose(f);
			return -1;
		}
		u = &users[nusers++];
		memcpy(u->u.name, line, c1 - line);
		u->u.name[c1 - line] = '\0';
		memcpy(u->hash, c1 + 1, c2 - c1 - 1);
		u->hash[c2 - c1 - 1] = '\0';
		snprintf(u->u.role, sizeof(u->u.role), "%s", c2 + 1);
	}
	fclose(f);
	if (nusers == 0)
	{
		snprintf(err, errlen, "%s: no users", path);
		return -1;
	}
	memset(&cd, 0, sizeof(cd));
	{
		const char *h = crypt_r("", "$6$jobqwebdummysalt$", &cd);

		snprintf(dummy_hash, sizeof(dummy_hash), "%s", h && h[0] != '*' ? h : users[0].hash);
	}
	return 0;
}

/* equal strings, in a time that depends only on the length of b */
static int
const_equal(const char *a, const char *b)
{
	size_t		la = strlen(a),
				lb = strlen(b);
	unsigned char d = (unsigned char) (la != lb);

	for (size_t i = 0; i < lb; i++)
		d |= (unsigned char) (a[i < la ? i : 0] ^ b[i]);
	return d == 0;
}

static int
b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* decode base64 into out (NUL-terminated); -1 when invalid or too long */
static int
b64decode(const char *in, char *out, size_t outlen)
{
	size_t		o = 0;
	unsigned	acc = 0;
	int			bits = 0;

	for (; *in && *in != '='; in++)
	{
		int			v = b64val((unsigned char) *in);

		if (v < 0)
			return -1;
		acc = (acc << 6) | (unsigned) v;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			if (o + 1 >= outlen)
				return -1;
			out[o++] = (char) ((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	return memchr(out, '\0', o) == NULL ? 0 : -1;
}

static Failures *
failures_of(const char *ip, time_t now)
{
	Failures   *oldest = &failures[0];

	for (int i = 0; i < LIMIT_SLOTS; i++)
	{
		if (strcmp(failures[i].ip, ip) == 0)
			return &failures[i];
		if (failures[i].window < oldest->window)
			oldest = &failures[i];
	}
	snprintf(oldest->ip, sizeof(oldest->ip), "%s", ip);
	oldest->window = now;
	oldest->count = 0;
	return oldest;
}

static const User *
verified_lookup(const char *header, time_t now)
{
	const User *found = NULL;

	pthread_mutex_lock(&verified_lock);
	for (int i = 0; i < VERIFIED_SLOTS; i++)
		if (verified[i].user != NULL && verified[i].until > now &&
			const_equal(header, verified[i].header))
			found = verified[i].user;
	pthread_mutex_unlock(&verified_lock);
	return found;
}

static void
verified_store(const char *header, const User *u, time_t now)
{
	Verified   *slot = &verified[0];

	if (strlen(header) >= sizeof(verified[0].header))
		return;
	pthread_mutex_lock(&verified_lock);
	for (int i = 0; i < VERIFIED_SLOTS; i++)
		if (verified[i].until < slot->until)
			slot = &verified[i];
	snprintf(slot->header, sizeof(slot->header), "%s", header);
	slot->user = u;
	slot->until = now + VERIFIED_SECONDS;
	pthread_mutex_unlock(&verified_lock);
}

int
web_auth_check(const char *authorization, const char *ip, WebUser *user)
{
	char		cred[512];
	char	   *colon;
	const User *found = NULL;
	const char *h;
	struct crypt_data *cd;
	int			ok;
	time_t		now = time(NULL);
	Failures   *f;

	/* no credentials at all is a browser's first request, not a guess */
	if (authorization == NULL)
		return 0;
	pthread_mutex_lock(&failures_lock);
	f = failures_of(ip, now);
	if (now - f->window >= 60)
	{
		f->window = now;
		f->count = 0;
	}
	if (f->count >= WEB_AUTH_FAILURES_PER_MIN)
	{
		pthread_mutex_unlock(&failures_lock);
		return -1;
	}
	pthread_mutex_unlock(&failures_lock);

	if ((found = verified_lookup(authorization, now)) != NULL)
	{
		*user = found->u;
		return 1;
	}
	ok = authorization != NULL && strncmp(authorization, "Basic ", 6) == 0 &&
		b64decode(authorization + 6, cred, sizeof(cred)) == 0 &&
		(colon = strchr(cred, ':')) != NULL;
	if (ok)
	{
		*colon = '\0';
		for (int i = 0; i < nusers; i++)
			if (strcmp(users[i].u.name, cred) == 0)
				found = &users[i];
		cd = calloc(1, sizeof(*cd));
		if (cd == NULL)
			return 0;
		h = crypt_r(colon + 1, found ? found->hash : dummy_hash, cd);
		ok = found != NULL && h != NULL && const_equal(h, found->hash);
		free(cd);
	}
	if (ok)
	{
		verified_store(authorization, found, now);
		*user = found->u;
		return 1;
	}
	pthread_mutex_lock(&failures_lock);
	f = failures_of(ip, now);
	f->count++;
	pthread_mutex_unlock(&failures_lock);
	return 0;
}
