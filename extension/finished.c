/*-------------------------------------------------------------------------
 *
 * finished.c
 *	  Completion events: for a queue with notify_finished on, a NOTIFY on
 *	  channel "jobq.finished.<queue>" after the commit that finished its
 *	  jobs, whose payload is a line "<id> <state>" per job (completed, dead
 *	  or cancelled), nothing else: no payload, no result, no error (any
 *	  role may LISTEN on any channel).
 *
 * Every statement that finishes a job of such a queue calls
 * jobq_finished_note; the notes wait for the transaction's end in an array
 * of this transaction, as wake.c's notes do.  A rolled-back transaction or
 * savepoint drops its notes: nothing is sent for a rollback.  At commit:
 *
 *	with a relay for the database (relay.c: the sweeper, preloaded), the
 *		notes are handed to the relay at XACT_EVENT_COMMIT, once the commit
 *		is visible, and the relay sends them in its next round, batched with
 *		those of every other commit since its last round.  The finishing
 *		transaction never takes the notify lock, which serializes the
 *		commits of every notifying transaction;
 *	without one, the transaction sends its own NOTIFYs just before it
 *		commits (XACT_EVENT_PRE_COMMIT), which PostgreSQL delivers after the
 *		commit and never for a rollback.
 *
 * Either way the lines of one queue go out in as few notifications as
 * fit under JOBQ_FINISHED_PAYLOAD_MAX bytes each (PostgreSQL's limit is
 * 8000).  They are hints, not a log: a listener that was not connected, a
 * relay that exits between a commit and its round, or a relay whose buffer
 * is full (then its next notification on the channel carries a line
 * "lost") misses events.  jobq_finished_since (events.c) is the durable
 * catch-up; together they are at least once (doc/sql.md).
 *
 * A queue with notify_finished off costs its finishing statements nothing
 * here: they do not call in (the callers test the queue's setting, which
 * the queue cache holds).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/finished.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/xact.h"
#include "commands/async.h"
#include "utils/snapmgr.h"

/* The finished jobs of this transaction, in TopTransactionContext */
static JobqFinishedNote *notes = NULL;
static int	nnotes = 0;
static int	notes_cap = 0;
static bool callbacks_registered = false;

/* jobq_finished_any's answer, and the queue cache generation it is of */
static int	any_finished = -1;
static uint64 any_finished_gen = 0;

enum
{
	ST_ANY_FINISHED,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_ANY_FINISHED] = {"any_notify_finished",
		"SELECT EXISTS (SELECT 1 FROM jobq.queues WHERE notify_finished)",
		0, {InvalidOid}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_finished_statements = {statements, NUM_STATEMENTS, plans, NULL};

static void finished_xact_callback(XactEvent event, void *arg);
static void finished_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
									  SubTransactionId parentSubid, void *arg);

/*
 * jobq_finished_state_name
 *	  The state as the events and jobq_finished_since name it.
 */
const char *
jobq_finished_state_name(JobqAwaitState state)
{
	switch (state)
	{
		case JOBQ_AWAIT_COMPLETED:
			return "completed";
		case JOBQ_AWAIT_DEAD:
			return "dead";
		case JOBQ_AWAIT_CANCELLED:
			return "cancelled";
		case JOBQ_AWAIT_READY:
			break;
	}
	elog(ERROR, "jobq: a job back to ready is not finished");
	return NULL;				/* keep compiler quiet */
}

/*
 * jobq_finished_note
 *	  Job id of queue (len bytes) became state (completed, dead, cancelled)
 *	  in this (sub)transaction, and its queue has notify_finished on: send
 *	  its event once the transaction commits.
 */
void
jobq_finished_note(const char *queue, int len, int64 id, JobqAwaitState state)
{
	JobqFinishedNote *note;

	if (len > JOBQ_QUEUE_NAME_MAX)
		elog(ERROR, "jobq: queue name too long for a channel");
	(void) jobq_finished_state_name(state);
	if (!callbacks_registered)
	{
		RegisterXactCallback(finished_xact_callback, NULL);
		RegisterSubXactCallback(finished_subxact_callback, NULL);
		callbacks_registered = true;
	}
	if (nnotes == notes_cap)
		notes = jobq_xact_array_grow(notes, &notes_cap, sizeof(JobqFinishedNote));
	note = &notes[nnotes++];
	note->id = id;
	note->level = GetCurrentTransactionNestLevel();
	note->state = (char) state;
	memcpy(note->queue, queue, len);
	note->queue[len] = '\0';
}

/*
 * jobq_finished_any
 *	  Whether any queue has notify_finished on (a database whose SQL is
 *	  0.1.0 has none).  Inside SPI.  Read once per invalidation of
 *	  jobq.queues, which a transaction accepts at its start and when it
 *	  first locks a table: a statement finishing jobs pays a comparison.
 */
bool
jobq_finished_any(void)
{
	uint64		gen = jobq_queue_cache_generation();
	bool		isnull;
	bool		any;
	int			rc;

	if (any_finished_gen == gen && any_finished >= 0)
		return any_finished > 0;
	if (!jobq_queues_have_020())
		any = false;
	else
	{
		/* NB: the caller's rows stay SPI's result */
		SPITupleTable *tuptable = SPI_tuptable;
		uint64		processed = SPI_processed;

		rc = SPI_execute_snapshot(jobq_plan(&jobq_finished_statements, ST_ANY_FINISHED),
								  NULL, NULL, GetLatestSnapshot(), InvalidSnapshot,
								  false, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "read whether queues notify finished jobs");
		any = jobq_spi_getbool(0, 1, &isnull);
		SPI_freetuptable(SPI_tuptable);
		SPI_tuptable = tuptable;
		SPI_processed = processed;
	}
	/* what raced an invalidation is used, not kept */
	if (jobq_queue_cache_generation() == gen)
	{
		any_finished = any ? 1 : 0;
		any_finished_gen = gen;
	}
	return any;
}

/*
 * jobq_finished_rows_slow
 *	  The body of jobq_finished_rows: the statement just run finished the
 *	  jobs of SPI_tuptable (their ids in column id_col, or the one job id
 *	  when id_col is 0; their queues in queue_col); note those of queues
 *	  with notify_finished.
 */
void
jobq_finished_rows_slow(JobqAwaitState state, int id_col, int64 id, int queue_col)
{
	SPITupleTable *tuptable = SPI_tuptable;
	uint64		n = SPI_processed;

	for (uint64 r = 0; r < n; r++)
	{
		bool		isnull;
		Datum		q = SPI_getbinval(tuptable->vals[r], tuptable->tupdesc, queue_col, &isnull);
		text	   *queue;
		JobqQueueSettings settings;
		int64		job = id;

		if (isnull)
			continue;
		queue = DatumGetTextPP(q);
		if (!jobq_queue_settings(queue, &settings) ||
			!jobq_setting_020(&settings, notify_finished))
			continue;
		if (id_col > 0)
			job = DatumGetInt64(SPI_getbinval(tuptable->vals[r], tuptable->tupdesc, id_col,
											  &isnull));
		jobq_finished_note(VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue), job, state);
	}
	/* jobq_queue_settings may have run statements of its own */
	SPI_tuptable = tuptable;
	SPI_processed = n;
}

/*
 * jobq_finished_sender_*
 *	  Build the notifications of one queue: lines "<id> <state>" joined by
 *	  newlines, a NOTIFY each time the next line would not fit, and one for
 *	  what is left at the end.  Used by this transaction (no relay) and by
 *	  the relay's round; Async_Notify queues them in the current
 *	  transaction.
 */
void
jobq_finished_sender_begin(JobqFinishedSender *s, const char *queue)
{
	int			len = strlen(queue);

	if (len > JOBQ_QUEUE_NAME_MAX)
		elog(ERROR, "jobq: queue name too long for a channel");
	memcpy(s->channel, JOBQ_FINISHED_CHANNEL_PREFIX, strlen(JOBQ_FINISHED_CHANNEL_PREFIX));
	memcpy(s->channel + strlen(JOBQ_FINISHED_CHANNEL_PREFIX), queue, len + 1);
	initStringInfo(&s->payload);
}

static void
sender_flush(JobqFinishedSender *s)
{
	if (s->payload.len > 0)
		Async_Notify(s->channel, s->payload.data);
	resetStringInfo(&s->payload);
}

void
jobq_finished_sender_line(JobqFinishedSender *s, const char *line)
{
	int			len = strlen(line);

	if (s->payload.len > 0 && s->payload.len + 1 + len > JOBQ_FINISHED_PAYLOAD_MAX)
		sender_flush(s);
	if (s->payload.len > 0)
		appendStringInfoChar(&s->payload, '\n');
	appendBinaryStringInfo(&s->payload, line, len);
}

void
jobq_finished_sender_job(JobqFinishedSender *s, int64 id, JobqAwaitState state)
{
	char		line[40];

	snprintf(line, sizeof(line), INT64_FORMAT " %s", id, jobq_finished_state_name(state));
	jobq_finished_sender_line(s, line);
}

void
jobq_finished_sender_end(JobqFinishedSender *s)
{
	sender_flush(s);
	pfree(s->payload.data);
}

/*
 * send_own
 *	  No relay: this transaction's own NOTIFYs, per queue in the order of
 *	  its first note, before the commit (PRE_COMMIT may still queue them).
 */
static void
send_own(void)
{
	bool	   *sent = palloc0(sizeof(bool) * nnotes);

	for (int i = 0; i < nnotes; i++)
	{
		JobqFinishedSender s;

		if (sent[i])
			continue;
		jobq_finished_sender_begin(&s, notes[i].queue);
		for (int k = i; k < nnotes; k++)
			if (!sent[k] && strcmp(notes[k].queue, notes[i].queue) == 0)
			{
				jobq_finished_sender_job(&s, notes[k].id, (JobqAwaitState) notes[k].state);
				sent[k] = true;
			}
		jobq_finished_sender_end(&s);
	}
	pfree(sent);
}

/*
 * finished_xact_callback
 *	  Before the commit, without a relay, send; at the commit, with one,
 *	  hand over; at commit, abort or prepare, forget.  A prepared
 *	  transaction's events are dropped (PostgreSQL refuses to prepare one
 *	  that notified): listeners catch up with jobq_finished_since.
 */
static void
finished_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (nnotes > 0 && jobq_relay_for_database() < 0)
			{
				send_own();
				nnotes = 0;
			}
			break;
		case XACT_EVENT_COMMIT:
			if (nnotes > 0)
			{
				int			slot = jobq_relay_for_database();

				/* NB: a relay gone since PRE_COMMIT loses these hints */
				if (slot >= 0)
					jobq_relay_hand_finished(slot, notes, nnotes);
			}
			/* FALLTHROUGH */
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the array lived in TopTransactionContext, gone with it */
			notes = NULL;
			nnotes = 0;
			notes_cap = 0;
			break;
		default:
			break;
	}
}

/*
 * finished_subxact_callback
 *	  A rolled-back subtransaction drops its notes; a committed one leaves
 *	  them to its parent.
 */
static void
finished_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (nnotes > 0 &&
		(event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB))
		nnotes = jobq_xact_array_subxact(notes, nnotes, sizeof(JobqFinishedNote),
										 offsetof(JobqFinishedNote, level),
										 event == SUBXACT_EVENT_COMMIT_SUB);
}
