/*
 * listen.c: count NOTIFYs on one channel until SIGTERM (O3).
 *
 * usage: stress-listen CONNINFO CHANNEL   (prints "notifications N")
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <libpq-fe.h>

int
main(int argc, char **argv)
{
	PGconn	   *pg;
	PGresult   *r;
	char	   *ch, sql[256];
	long		n = 0;

	if (argc < 3)
		return 2;
	install_stop_handler();
	pg = PQconnectdb(argv[1]);
	if (PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "listen: %s", PQerrorMessage(pg));
		return 2;
	}
	ch = PQescapeIdentifier(pg, argv[2], strlen(argv[2]));
	snprintf(sql, sizeof(sql), "LISTEN %s", ch);
	PQfreemem(ch);
	r = PQexec(pg, sql);
	PQclear(r);
	printf("listening\n");
	fflush(stdout);
	while (!stop_flag)
	{
		fd_set		fds;
		struct timeval tv = {0, 100000};
		PGnotify   *nt;
		int			sock = PQsocket(pg);

		FD_ZERO(&fds);
		FD_SET(sock, &fds);
		if (select(sock + 1, &fds, NULL, NULL, &tv) < 0)
			continue;
		PQconsumeInput(pg);
		while ((nt = PQnotifies(pg)) != NULL)
		{
			n++;
			PQfreemem(nt);
		}
	}
	PQconsumeInput(pg);
	{
		PGnotify   *nt;

		while ((nt = PQnotifies(pg)) != NULL)
		{
			n++;
			PQfreemem(nt);
		}
	}
	printf("notifications %ld\n", n);
	PQfinish(pg);
	return 0;
}
