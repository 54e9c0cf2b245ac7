/*-------------------------------------------------------------------------
 *
 * await_slots.c
 *	  Awaited job ids in shared memory: the awaiters' registrations, the
 *	  commit hook that wakes them, and the outcome handed over to them.
 *
 * An awaiter (await.c) registers one entry per job id it waits for: the
 * id, its database and its latch, chained into a hash bucket of (database,
 * id).  This is a table of its own, separate from the waiting claims of
 * wait.c: a claim waits for a queue, an awaiter for a job.
 *
 * Every statement that ends an attempt (complete, complete_batch, fail,
 * pop, cancel) calls jobq_await_note for each job it finished.  When the
 * job's bucket is empty that costs one atomic read: producers and
 * completes pay nothing measurable while nobody awaits (bench "Enqueue and
 * complete with awaiters").  Otherwise the job, its new state and its
 * result or error are copied into a backend-local list of this
 * transaction, and at XACT_EVENT_COMMIT, when the commit is visible to
 * other backends, the matching entries get the outcome and their latches
 * are set.  A rollback, or a rolled-back savepoint, drops its notes: it
 * wakes nobody and hands nothing over.
 *
 * The handover is what lets an awaiter have the result of a job of a
 * queue that keeps no completed history (completed_retention = 0): the
 * committing backend copies the result (up to JOBQ_AWAIT_RESULT_MAX bytes)
 * or the error into a shared area of jobq.await_handover_memory, allocated
 * per entry.  A larger result, or one that does not fit, is not handed
 * over; the awaiter then reads history, or reports that the result was not
 * retained.  The heap stays the truth: an awaiter always reads the job's
 * row first and uses a handover only for a job found in neither table.
 *
 * NB, no lost wakeup: an awaiter registers (raising its bucket's count)
 * before it reads the job.  A statement that finished the job after the
 * registration sees the count and takes a note.  One that ran before it
 * took no note, but its commit may still come after the awaiter's read:
 * such a statement remembers the registration epoch it saw (once per
 * transaction), and its commit wakes every entry registered since then
 * (they re-read).  An entry registered after the commit reads a committed
 * state.
 *
 * Jobs ended in other ways (a sweep that expired leases, more than
 * JOBQ_AWAIT_NOTES_MAX jobs in one transaction) wake every awaiter of the
 * database at commit instead, and they re-read.
 *
 * Without shared_preload_libraries = 'jobq' none of this exists and
 * awaiters poll; with every entry taken an awaiter polls too.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/await_slots.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/memutils.h"

/* Hash buckets of (database, job id) */
#define AWAIT_BUCKETS		4096

/* Notes one transaction keeps; past it, its commit wakes every awaiter */
#define JOBQ_AWAIT_NOTES_MAX	1024

/* One awaited job id of one backend */
typedef struct JobqAwaitEntry
{
	int64		id;				/* 0: the entry is free */
	Oid			dboid;
	Latch	   *latch;			/* the awaiter's */
	int			pid;			/* the awaiter's, to free its entries */
	int			next;			/* next entry of the bucket, or of the free
								 * list; -1 ends either */
	uint64		epoch;			/* the registration epoch it was taken at */
	bool		handed;			/* a commit handed an outcome over */
	char		state;			/* JobqAwaitState of the outcome */
	bool		value_lost;		/* the result or error did not fit */
	TimestampTz finished_at;
	dsa_pointer value;			/* varlena copy of result or error, or
								 * InvalidDsaPointer */
} JobqAwaitEntry;

typedef struct JobqAwaitShared
{
	LWLock	   *lock;			/* protects entries, chains, free list */
	int			nentries;
	int			free_head;
	pg_atomic_uint32 nawaiting; /* entries in use */
	pg_atomic_uint64 epoch;		/* registrations, ever */
	pg_atomic_uint64 wakeups;	/* entries woken by commits, ever */
	pg_atomic_uint64 handovers; /* outcomes handed over, ever */
	int			heads[AWAIT_BUCKETS];
	pg_atomic_uint32 counts[AWAIT_BUCKETS];	/* entries per bucket */
	size_t		area_size;
	char	   *area_place;		/* the handover area (dsa in place) */
	JobqAwaitEntry entries[FLEXIBLE_ARRAY_MEMBER];
} JobqAwaitShared;

/* GUCs (jobq.c) */
int			jobq_max_await_ids = 4096;
int			jobq_await_handover_kb = 4096;

bool		jobq_await_on = false;	/* await_shared is set: jobq_await_note */

static JobqAwaitShared *await_shared = NULL;
static dsa_area *await_area = NULL;

/* This backend's entries (their indexes) */
static int *my_entries = NULL;
static int	my_nentries = 0;

/* Notes of the current transaction, in TopTransactionContext */
typedef struct AwaitNote
{
	int64		id;
	int			level;			/* subtransaction nesting level */
	char		state;			/* JobqAwaitState */
	TimestampTz finished_at;
	struct varlena *value;		/* result or error copy, or NULL */
} AwaitNote;

static AwaitNote *notes = NULL;
static int	nnotes = 0;
static int	notes_cap = 0;
static bool wake_all = false;	/* commit wakes every awaiter of the database */
static bool skipped = false;	/* a statement finished a job unnoted */
static uint64 skipped_epoch = 0;	/* the epoch it saw */
static bool callbacks_registered = false;

static inline int
bucket_index(Oid dboid, int64 id)
{
	uint64		h = (uint64) id * UINT64CONST(0x9E3779B97F4A7C15) ^ dboid;

	return (int) ((h >> 32) % AWAIT_BUCKETS);
}

/*
 * jobq_await_shmem_size
 *	  The entries plus the handover area.
 */
Size
jobq_await_shmem_size(void)
{
	Size		size = add_size(offsetof(JobqAwaitShared, entries),
								mul_size(jobq_max_await_ids, sizeof(JobqAwaitEntry)));

	size = MAXALIGN(size);
	return add_size(size, (Size) jobq_await_handover_kb * 1024);
}

/*
 * jobq_await_shmem_init
 *	  In shmem_startup_hook, under AddinShmemInitLock.  The handover area is
 *	  a dsa area placed in the main shared memory and never grown, so that
 *	  allocating in it at commit can fail only softly (DSA_ALLOC_NO_OOM).
 */
void
jobq_await_shmem_init(void)
{
	bool		found;

	await_shared = ShmemInitStruct("jobq await", jobq_await_shmem_size(), &found);
	if (!found)
	{
		dsa_area   *area;
		Size		offset = MAXALIGN(offsetof(JobqAwaitShared, entries) +
									  (Size) jobq_max_await_ids * sizeof(JobqAwaitEntry));

		await_shared->lock = &(GetNamedLWLockTranche("jobq await"))->lock;
		await_shared->nentries = jobq_max_await_ids;
		pg_atomic_init_u32(&await_shared->nawaiting, 0);
		pg_atomic_init_u64(&await_shared->epoch, 0);
		pg_atomic_init_u64(&await_shared->wakeups, 0);
		pg_atomic_init_u64(&await_shared->handovers, 0);
		for (int b = 0; b < AWAIT_BUCKETS; b++)
		{
			await_shared->heads[b] = -1;
			pg_atomic_init_u32(&await_shared->counts[b], 0);
		}
		for (int i = 0; i < jobq_max_await_ids; i++)
		{
			await_shared->entries[i].id = 0;
			await_shared->entries[i].next = i + 1 < jobq_max_await_ids ? i + 1 : -1;
		}
		await_shared->free_head = jobq_max_await_ids > 0 ? 0 : -1;
		await_shared->area_place = (char *) await_shared + offset;
		await_shared->area_size = (Size) jobq_await_handover_kb * 1024;
		area = dsa_create_in_place(await_shared->area_place, await_shared->area_size,
								   await_shared->lock->tranche, NULL);
		dsa_set_size_limit(area, await_shared->area_size);
		dsa_pin(area);
		dsa_detach(area);
	}
	jobq_await_on = true;
}

/*
 * attach_area
 *	  This backend's handle of the handover area, attached on first use
 *	  (it lives as long as the backend).
 */
static dsa_area *
attach_area(void)
{
	if (await_area == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		await_area = dsa_attach_in_place(await_shared->area_place, NULL);
		MemoryContextSwitchTo(old);
	}
	return await_area;
}

/*
 * jobq_await_available
 *	  Whether awaiters can be woken (jobq was preloaded).
 */
bool
jobq_await_available(void)
{
	return await_shared != NULL;
}

/*
 * free_entry
 *	  Unchain entry i and give it back.  Under the lock, exclusive.
 */
static void
free_entry(int i)
{
	JobqAwaitEntry *e = &await_shared->entries[i];
	int			b = bucket_index(e->dboid, e->id);
	int		   *link = &await_shared->heads[b];

	while (*link != i)
		link = &await_shared->entries[*link].next;
	*link = e->next;
	if (DsaPointerIsValid(e->value))
		dsa_free(attach_area(), e->value);
	e->value = InvalidDsaPointer;
	e->id = 0;
	e->latch = NULL;
	e->next = await_shared->free_head;
	await_shared->free_head = i;
	pg_atomic_fetch_sub_u32(&await_shared->counts[b], 1);
	pg_atomic_fetch_sub_u32(&await_shared->nawaiting, 1);
}

/*
 * jobq_await_unregister
 *	  Free this backend's entries.  Safe to call twice.
 */
void
jobq_await_unregister(void)
{
	if (await_shared == NULL || my_nentries == 0)
		return;
	LWLockAcquire(await_shared->lock, LW_EXCLUSIVE);
	for (int k = 0; k < my_nentries; k++)
		free_entry(my_entries[k]);
	LWLockRelease(await_shared->lock);
	my_nentries = 0;
}

static void
unregister_at_exit(int code, Datum arg)
{
	jobq_await_unregister();
}

/*
 * jobq_await_register
 *	  Take an entry per id (n of them, all or none).  Returns false when
 *	  awaiters cannot be woken (not preloaded, or too few free entries):
 *	  the caller then polls.
 */
bool
jobq_await_register(const int64 *ids, int n)
{
	static bool exit_hook = false;
	uint64		epoch;
	int			free_count = 0;

	if (await_shared == NULL || n > await_shared->nentries)
		return false;
	Assert(my_nentries == 0);
	if (!exit_hook)
	{
		before_shmem_exit(unregister_at_exit, (Datum) 0);
		exit_hook = true;
	}
	if (my_entries == NULL)
		my_entries = MemoryContextAlloc(TopMemoryContext,
										sizeof(int) * JOBQ_AWAIT_MANY_MAX);
	if (n > JOBQ_AWAIT_MANY_MAX)
		return false;

	LWLockAcquire(await_shared->lock, LW_EXCLUSIVE);
	for (int i = await_shared->free_head; i >= 0 && free_count < n;
		 i = await_shared->entries[i].next)
		free_count++;
	if (free_count < n)
	{
		LWLockRelease(await_shared->lock);
		return false;
	}
	/* NB: a full barrier; the caller reads the jobs only after this */
	epoch = pg_atomic_add_fetch_u64(&await_shared->epoch, 1);
	for (int k = 0; k < n; k++)
	{
		int			i = await_shared->free_head;
		JobqAwaitEntry *e = &await_shared->entries[i];
		int			b = bucket_index(MyDatabaseId, ids[k]);

		await_shared->free_head = e->next;
		e->id = ids[k];
		e->dboid = MyDatabaseId;
		e->latch = MyLatch;
		e->pid = MyProcPid;
		e->epoch = epoch;
		e->handed = false;
		e->value_lost = false;
		e->value = InvalidDsaPointer;
		e->next = await_shared->heads[b];
		await_shared->heads[b] = i;
		pg_atomic_fetch_add_u32(&await_shared->counts[b], 1);
		pg_atomic_fetch_add_u32(&await_shared->nawaiting, 1);
		my_entries[my_nentries++] = i;
	}
	LWLockRelease(await_shared->lock);
	pg_memory_barrier();
	return true;
}

/*
 * jobq_await_handed
 *	  What a commit handed over for the k-th id this backend registered:
 *	  false when nothing was.  *value is a palloc'd copy of the result or
 *	  error (NULL if none or lost; *lost says which).
 */
bool
jobq_await_handed(int k, JobqAwaitState *state, TimestampTz *finished_at,
				  struct varlena **value, bool *lost)
{
	JobqAwaitEntry *e;
	bool		handed;

	if (await_shared == NULL || k >= my_nentries)
		return false;
	LWLockAcquire(await_shared->lock, LW_SHARED);
	e = &await_shared->entries[my_entries[k]];
	handed = e->handed;
	*value = NULL;
	if (handed)
	{
		*state = (JobqAwaitState) e->state;
		*finished_at = e->finished_at;
		*lost = e->value_lost;
		if (DsaPointerIsValid(e->value))
		{
			struct varlena *v = dsa_get_address(attach_area(), e->value);

			*value = palloc(VARSIZE(v));
			memcpy(*value, v, VARSIZE(v));
		}
	}
	LWLockRelease(await_shared->lock);
	return handed;
}

/*
 * jobq_await_counters
 *	  Entries in use and their capacity, wakeups and handovers ever.
 */
void
jobq_await_counters(int64 *awaiting, int64 *capacity, int64 *wakeups, int64 *handovers)
{
	*awaiting = await_shared ? pg_atomic_read_u32(&await_shared->nawaiting) : 0;
	*capacity = await_shared ? await_shared->nentries : 0;
	*wakeups = await_shared ? (int64) pg_atomic_read_u64(&await_shared->wakeups) : 0;
	*handovers = await_shared ? (int64) pg_atomic_read_u64(&await_shared->handovers) : 0;
}

/*
 * jobq_await_note_slow
 *	  The body of jobq_await_note once preloaded: note the job if somebody
 *	  awaits its bucket, else remember the epoch this statement saw.
 */
void
jobq_await_note_slow(int64 id, JobqAwaitState state, TimestampTz finished_at,
					 const struct varlena *value)
{
	AwaitNote  *note;

	if (pg_atomic_read_u32(&await_shared->counts[bucket_index(MyDatabaseId, id)]) == 0)
	{
		if (!skipped)
		{
			skipped_epoch = pg_atomic_read_u64(&await_shared->epoch);
			skipped = true;
		}
		return;
	}
	if (nnotes >= JOBQ_AWAIT_NOTES_MAX)
	{
		wake_all = true;
		return;
	}
	if (nnotes == notes_cap)
		notes = jobq_xact_array_grow(notes, &notes_cap, sizeof(AwaitNote));
	note = &notes[nnotes++];
	note->id = id;
	note->level = GetCurrentTransactionNestLevel();
	note->state = (char) state;
	note->finished_at = finished_at;
	note->value = NULL;
	if (value != NULL && VARSIZE_ANY(value) <= JOBQ_AWAIT_RESULT_MAX + VARHDRSZ)
	{
		struct varlena *v = PG_DETOAST_DATUM_COPY(PointerGetDatum(value));

		/* the copy must outlive the statement */
		note->value = MemoryContextAlloc(TopTransactionContext, VARSIZE(v));
		memcpy(note->value, v, VARSIZE(v));
		pfree(v);
	}
	else if (value != NULL)
		note->value = (struct varlena *) -1;	/* too large: lost */
}

/*
 * jobq_await_recheck_all
 *	  Have this transaction's commit wake every awaiter of the database
 *	  (jobs ended by a statement that does not name them, such as a sweep).
 */
void
jobq_await_recheck_all(void)
{
	if (await_shared != NULL && pg_atomic_read_u32(&await_shared->nawaiting) > 0)
		wake_all = true;
}

/*
 * hand_over
 *	  Give entry e the outcome of note.  Under the lock, exclusive.
 */
static void
hand_over(JobqAwaitEntry *e, const AwaitNote *note)
{
	if (DsaPointerIsValid(e->value))
		dsa_free(attach_area(), e->value);
	e->value = InvalidDsaPointer;
	e->value_lost = false;
	if (note->value == (struct varlena *) -1)
		e->value_lost = true;
	else if (note->value != NULL)
	{
		dsa_pointer p = dsa_allocate_extended(attach_area(), VARSIZE(note->value),
											  DSA_ALLOC_NO_OOM);

		if (DsaPointerIsValid(p))
		{
			memcpy(dsa_get_address(attach_area(), p), note->value, VARSIZE(note->value));
			e->value = p;
		}
		else
			e->value_lost = true;
	}
	e->state = note->state;
	e->finished_at = note->finished_at;
	e->handed = true;
	pg_atomic_fetch_add_u64(&await_shared->handovers, 1);
}

/*
 * wake_at_commit
 *	  Hand the notes over and set the latches of their awaiters, and of
 *	  every awaiter of the database registered since an unnoted statement
 *	  (or of all of them when wake_all).
 */
static void
wake_at_commit(void)
{
	bool		since = false;

	/* NB: our commit is visible by now; read nothing before it */
	pg_memory_barrier();
	if (pg_atomic_read_u32(&await_shared->nawaiting) == 0)
		return;
	if (skipped && pg_atomic_read_u64(&await_shared->epoch) != skipped_epoch)
		since = true;
	if (nnotes == 0 && !since && !wake_all)
		return;

	LWLockAcquire(await_shared->lock, LW_EXCLUSIVE);
	for (int n = 0; n < nnotes; n++)
	{
		const AwaitNote *note = &notes[n];

		for (int i = await_shared->heads[bucket_index(MyDatabaseId, note->id)]; i >= 0;
			 i = await_shared->entries[i].next)
		{
			JobqAwaitEntry *e = &await_shared->entries[i];

			if (e->id != note->id || e->dboid != MyDatabaseId)
				continue;
			hand_over(e, note);
			SetLatch(e->latch);
			pg_atomic_fetch_add_u64(&await_shared->wakeups, 1);
		}
	}
	if (since || wake_all)
		for (int i = 0; i < await_shared->nentries; i++)
		{
			JobqAwaitEntry *e = &await_shared->entries[i];

			if (e->id != 0 && e->dboid == MyDatabaseId &&
				(wake_all || e->epoch > skipped_epoch))
			{
				SetLatch(e->latch);
				pg_atomic_fetch_add_u64(&await_shared->wakeups, 1);
			}
		}
	LWLockRelease(await_shared->lock);
}

static void
forget_notes(void)
{
	notes = NULL;
	nnotes = 0;
	notes_cap = 0;
	wake_all = false;
	skipped = false;
}

/*
 * await_xact_callback
 *	  At commit, wake and hand over; at commit, abort or prepare, forget.
 *	  (A prepared transaction's outcome is found by the awaiters' recheck.)
 */
static void
await_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (nnotes > 0 || skipped || wake_all)
				wake_at_commit();
			forget_notes();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			forget_notes();
			break;
		default:
			break;
	}
}

/*
 * await_subxact_callback
 *	  A rolled-back subtransaction drops its notes; a committed one leaves
 *	  them to its parent.
 */
static void
await_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (nnotes > 0 &&
		(event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB))
		nnotes = jobq_xact_array_subxact(notes, nnotes, sizeof(AwaitNote),
										 offsetof(AwaitNote, level),
										 event == SUBXACT_EVENT_COMMIT_SUB);
}

/*
 * jobq_await_register_callbacks
 *	  From _PG_init when preloading.
 */
void
jobq_await_register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(await_xact_callback, NULL);
	RegisterSubXactCallback(await_subxact_callback, NULL);
	callbacks_registered = true;
}
