/*-------------------------------------------------------------------------
 *
 * json_scan.c
 *	  A strict JSON scanner: it validates one JSON text and gives the
 *	  spans of an object's top-level members, without building a tree.
 *
 * For the lines of jobq-worker's persistent handler protocol and the
 * answers jobq-http gets.  The worker needs little from a handler's answer: the job id, a status,
 * an error text, a delay, and the result, which goes to the server as the
 * text it was (the server parses it as jsonb and keeps its own canonical
 * form).  So the scanner checks the grammar of RFC 8259 (strings with
 * their escapes and UTF-8 left to the server, numbers, literals, nesting
 * bounded by JSON_SCAN_MAX_DEPTH) and reports spans; jobq_json_string_decode
 * turns a string member into text.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/common/json_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-common.h"

#define JSON_SCAN_MAX_DEPTH 64

typedef struct Scan
{
	const char *p;
	const char *end;
	const char *err;
} Scan;

static bool scan_value(Scan *s, int depth, JobqJsonKind *kind);

static void
skip_ws(Scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' ||
							 *s->p == '\r'))
		s->p++;
}

static bool
fail(Scan *s, const char *why)
{
	if (s->err == NULL)
		s->err = why;
	return false;
}

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool
scan_string(Scan *s)
{
	s->p++;						/* the opening quote */
	while (s->p < s->end)
	{
		unsigned char c = (unsigned char) *s->p;

		if (c == '"')
		{
			s->p++;
			return true;
		}
		if (c < 0x20)
			return fail(s, "control character in a string");
		if (c == '\\')
		{
			if (++s->p >= s->end)
				break;
			switch (*s->p)
			{
				case '"':
				case '\\':
				case '/':
				case 'b':
				case 'f':
				case 'n':
				case 'r':
				case 't':
					s->p++;
					break;
				case 'u':
					if (s->end - s->p < 5 || !is_hex(s->p[1]) || !is_hex(s->p[2]) ||
						!is_hex(s->p[3]) || !is_hex(s->p[4]))
						return fail(s, "bad \\u escape");
					s->p += 5;
					break;
				default:
					return fail(s, "bad escape in a string");
			}
			continue;
		}
		s->p++;
	}
	return fail(s, "unterminated string");
}

static bool
scan_digits(Scan *s)
{
	const char *start = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > start;
}

static bool
scan_number(Scan *s)
{
	if (*s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (!scan_digits(s))
		return fail(s, "bad number");
	if (s->p < s->end && *s->p == '.')
	{
		s->p++;
		if (!scan_digits(s))
			return fail(s, "bad number");
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
	{
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!scan_digits(s))
			return fail(s, "bad number");
	}
	return true;
}

static bool
scan_literal(Scan *s, const char *word)
{
	size_t		n = strlen(word);

	if ((size_t) (s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return fail(s, "unexpected character");
	s->p += n;
	return true;
}

/* an object or an array, after its opening bracket */
static bool
scan_container(Scan *s, int depth, char close)
{
	bool		first = true;

	s->p++;
	for (;;)
	{
		JobqJsonKind	kind;

		skip_ws(s);
		if (s->p >= s->end)
			return fail(s, "unterminated object or array");
		if (*s->p == close && first)
		{
			s->p++;
			return true;
		}
		if (close == '}')
		{
			if (*s->p != '"' || !scan_string(s))
				return fail(s, "expected a member name");
			skip_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return fail(s, "expected ':'");
			s->p++;
		}
		if (!scan_value(s, depth + 1, &kind))
			return false;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',')
		{
			s->p++;
			first = false;
			continue;
		}
		if (s->p < s->end && *s->p == close)
		{
			s->p++;
			return true;
		}
		return fail(s, "expected ',' or the end of an object or array");
	}
}

static bool
scan_value(Scan *s, int depth, JobqJsonKind *kind)
{
	if (depth > JSON_SCAN_MAX_DEPTH)
		return fail(s, "nested too deeply");
	skip_ws(s);
	if (s->p >= s->end)
		return fail(s, "expected a value");
	switch (*s->p)
	{
		case '"':
			*kind = JOBQ_JV_STRING;
			return scan_string(s);
		case '{':
			*kind = JOBQ_JV_OBJECT;
			return scan_container(s, depth, '}');
		case '[':
			*kind = JOBQ_JV_ARRAY;
			return scan_container(s, depth, ']');
		case 't':
			*kind = JOBQ_JV_TRUE;
			return scan_literal(s, "true");
		case 'f':
			*kind = JOBQ_JV_FALSE;
			return scan_literal(s, "false");
		case 'n':
			*kind = JOBQ_JV_NULL;
			return scan_literal(s, "null");
		default:
			*kind = JOBQ_JV_NUMBER;
			if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
				return scan_number(s);
			return fail(s, "unexpected character");
	}
}

/*
 * jobq_json_object_scan
 *		Check that text[0..len) is exactly one JSON object (white space
 *		around it allowed) and store its top-level members in m[0..max):
 *		name (between its quotes, escapes not decoded) and value (the whole
 *		text of the value) spans, and the value's kind.  A member past max
 *		is checked but not stored.  Returns false with *err (static text)
 *		on a syntax error.  A name repeated keeps every occurrence; the
 *		caller takes the first (jobq_json_member).
 */
int
jobq_json_object_scan(const char *text, size_t len, JobqJsonMember *m, int max, int *n,
				 const char **err)
{
	Scan		s = {text, text + len, NULL};

	*n = 0;
	skip_ws(&s);
	if (s.p >= s.end || *s.p != '{')
	{
		*err = "not a JSON object";
		return false;
	}
	s.p++;
	skip_ws(&s);
	if (s.p < s.end && *s.p == '}')
		s.p++;
	else
	{
		for (;;)
		{
			const char *name;
			const char *name_end;
			const char *value;
			JobqJsonKind	kind;

			skip_ws(&s);
			if (s.p >= s.end || *s.p != '"')
			{
				*err = "expected a member name";
				return false;
			}
			name = s.p;
			if (!scan_string(&s))
				break;
			name_end = s.p - 1;	/* its closing quote */
			skip_ws(&s);
			if (s.p >= s.end || *s.p != ':')
			{
				fail(&s, "expected ':'");
				break;
			}
			s.p++;
			skip_ws(&s);
			value = s.p;
			if (!scan_value(&s, 1, &kind))
				break;
			if (*n < max)
			{
				m[*n].name = name + 1;
				m[*n].namelen = (size_t) (name_end - name - 1);
				m[*n].value = value;
				m[*n].valuelen = (size_t) (s.p - value);
				m[*n].kind = kind;
				(*n)++;
			}
			skip_ws(&s);
			if (s.p < s.end && *s.p == ',')
			{
				s.p++;
				continue;
			}
			if (s.p < s.end && *s.p == '}')
			{
				s.p++;
				break;
			}
			fail(&s, "expected ',' or '}'");
			break;
		}
		if (s.err)
		{
			*err = s.err;
			return false;
		}
	}
	skip_ws(&s);
	if (s.p != s.end)
	{
		*err = "text after the object";
		return false;
	}
	return true;
}

/* whether text[0..len) is one JSON text (white space around it allowed) */
int
jobq_json_valid(const char *text, size_t len)
{
	Scan		s = {text, text + len, NULL};
	JobqJsonKind kind;

	if (!scan_value(&s, 0, &kind))
		return false;
	skip_ws(&s);
	return s.p == s.end;
}

/* the first member called name, or NULL */
const JobqJsonMember *
jobq_json_member(const JobqJsonMember *m, int n, const char *name)
{
	size_t		len = strlen(name);

	for (int i = 0; i < n; i++)
		if (m[i].namelen == len && memcmp(m[i].name, name, len) == 0)
			return &m[i];
	return NULL;
}

static void
put_utf8(char **o, unsigned long cp)
{
	char	   *p = *o;

	if (cp < 0x80)
		*p++ = (char) cp;
	else if (cp < 0x800)
	{
		*p++ = (char) (0xC0 | (cp >> 6));
		*p++ = (char) (0x80 | (cp & 0x3F));
	}
	else if (cp < 0x10000)
	{
		*p++ = (char) (0xE0 | (cp >> 12));
		*p++ = (char) (0x80 | ((cp >> 6) & 0x3F));
		*p++ = (char) (0x80 | (cp & 0x3F));
	}
	else
	{
		*p++ = (char) (0xF0 | (cp >> 18));
		*p++ = (char) (0x80 | ((cp >> 12) & 0x3F));
		*p++ = (char) (0x80 | ((cp >> 6) & 0x3F));
		*p++ = (char) (0x80 | (cp & 0x3F));
	}
	*o = p;
}

/*
 * jobq_json_string_decode
 *		The text of a string member (its escapes decoded, surrogate pairs
 *		joined), malloc'd; NULL when the member is not a string or holds
 *		\u0000 or a lone surrogate, which the server could not store.
 */
char *
jobq_json_string_decode(const JobqJsonMember *m)
{
	const char *p,
			   *end;
	char	   *out,
			   *o;

	if (m == NULL || m->kind != JOBQ_JV_STRING)
		return NULL;
	p = m->value + 1;
	end = m->value + m->valuelen - 1;
	out = o = jobq_xmalloc(m->valuelen + 1);	/* decoding never grows it */
	while (p < end)
	{
		unsigned long cp;

		if (*p != '\\')
		{
			*o++ = *p++;
			continue;
		}
		p++;
		switch (*p++)
		{
			case 'b':
				*o++ = '\b';
				break;
			case 'f':
				*o++ = '\f';
				break;
			case 'n':
				*o++ = '\n';
				break;
			case 'r':
				*o++ = '\r';
				break;
			case 't':
				*o++ = '\t';
				break;
			case 'u':
				cp = strtoul((char[5]) {p[0], p[1], p[2], p[3], '\0'}, NULL, 16);
				p += 4;
				if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' &&
					p[1] == 'u')
				{
					unsigned long lo = strtoul((char[5]) {p[2], p[3], p[4], p[5], '\0'},
											   NULL, 16);

					if (lo >= 0xDC00 && lo <= 0xDFFF)
					{
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
						p += 6;
					}
				}
				if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
				{
					free(out);
					return NULL;
				}
				put_utf8(&o, cp);
				break;
			default:			/* " \ / */
				*o++ = p[-1];
				break;
		}
	}
	*o = '\0';
	return out;
}
