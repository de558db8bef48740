/* SPDX-License-Identifier: Apache-2.0 */
/* Online selection's bookkeeping (online.h): size classes, candidates, rounds
 * and choices, with no MPI; engine/route.c does the agreements. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "algo.h"
#include "inter.h"
#include "online.h"
#include "tuning.h"

void ddl_online_init(ddl_online_t *o, const ddl_online_job_t *job)
{
    memset(o, 0, sizeof(*o));
    o->job = *job;
}

/* Rounds of every candidate: small calls are short and noisy, so they get
 * more; the largest get one (a round of 64 MiB calls already costs seconds). */
static int rounds_for(int cls)
{
    return cls < 16 ? 5 : cls < 22 ? 3 : cls < 25 ? 2 : 1;
}

/* The multiring carries the dimensions the class decided (job->dims). */
static ddl_candidate_t *add(ddl_online_class_t *k, const ddl_online_job_t *job, int algo, int lane_algo,
                            int chunk_shift)
{
    ddl_candidate_t *c = &k->cand[k->ncand++];
    *c = (ddl_candidate_t){.algo = algo, .lane_algo = lane_algo, .chunk_shift = chunk_shift};
    if (algo == DDL_ALGO_MULTIRING && job->dims) {
        c->ndims = job->dims;
        memcpy(c->dim_algo, k->dim_algo, sizeof(c->dim_algo));
    }
    return c;
}

/* Some of the class's sizes go past what the MPI path's exchange carries by
 * default, and its smallest is at most `most` bytes: what the exchange can
 * carry, the largest call that starts early, or that goes in halves (larger
 * ones of the class, if any, take the MPI path's plain form when that form
 * is chosen). */
static int class_above_exchange_up_to(const ddl_online_job_t *job, int cls, size_t most)
{
    size_t bottom = (size_t)1 << cls, top = ((size_t)2 << cls) - 1;
    return job->nnodes > 1 && top > job->exchange_min && bottom <= most;
}

/* Each candidate's rounds.  Exploring keeps each candidate's best round, and
 * the best of many candidates whose times are alike (the lanes' algorithms
 * and chunks) is lower than the best of one with as many rounds: on a noisy
 * host the MPI path, one candidate against five, lost to the lanes' luck (on
 * the emulated rails 256 and 512 KiB chose the lanes in some runs and took
 * twice MPI's time from then on).  So the MPI path's candidates and the
 * others are each timed as often in all (the smaller side's candidates get
 * more rounds), in classes of three rounds or more (below 4 MiB).  From 4 MiB
 * a call costs milliseconds to tens of them on a slow link, where the extra
 * rounds would cost seconds, and the paths are far apart there.  On one host
 * (virtual nodes) every call is short, and in the classes of two rounds (4-32
 * MiB) the MPI path timed between lane calls took 20-30% longer than alone
 * (2 virtual nodes, 4 MiB: 724-834 us against 590-650), and with two rounds
 * each (the lanes' four candidates eight in all) the lanes won two runs in
 * three and then ran at 0.72-0.78x MPI's speed. */
#define FAIR_ROUNDS_MIN 3
#define FAIR_ROUNDS_MIN_ONE_HOST 2

static void family_rounds(ddl_online_class_t *k, const ddl_online_job_t *job)
{
    int nm = 0;
    for (int i = 0; i < k->ncand; i++)
        nm += k->cand[i].algo == DDL_ALGO_MPI;
    int no = k->ncand - nm, most = nm > no ? nm : no;
    k->mpi_rounds = k->other_rounds = k->rounds;
    if (k->rounds >= (job->one_host ? FAIR_ROUNDS_MIN_ONE_HOST : FAIR_ROUNDS_MIN) && nm && no) {
        k->mpi_rounds = k->rounds * ((most + nm - 1) / nm);
        k->other_rounds = k->rounds * ((most + no - 1) / no);
    }
    k->planned = nm * k->mpi_rounds + no * k->other_rounds;
}

static int rounds_of(const ddl_online_class_t *k, int i)
{
    return k->cand[i].algo == DDL_ALGO_MPI ? k->mpi_rounds : k->other_rounds;
}

/* The candidates, always in this order (the agreement compares them by index):
 * the lanes with the model's choices (with a grid: the multiring, then each
 * lane algorithm when they are candidates too: each row of inter_algos.def
 * that is one on this many nodes); the system MPI (and, for
 * messages it could carry, the owners' exchange with the data; where a
 * repeated call may start early, the MPI path without that; where it can,
 * the owners' own allreduce in halves, and then not the early start); half
 * and twice the chunk.  While the class decides the multiring's dimensions
 * (job->dims), only ring and rd along the dimension of this stage. */
static void start(ddl_online_class_t *k, const ddl_online_job_t *job, int cls, int chunked)
{
    ddl_online_class_t kept = *k;
    memset(k, 0, sizeof(*k));
    k->explorations = kept.explorations + 1;
    k->stage = job->dims && kept.stage == 0 ? 1 : kept.stage;
    memcpy(k->dim_algo, kept.dim_algo, sizeof(k->dim_algo));
    int several = job->nnodes > 1;
    if (k->stage && k->stage <= job->dims) {
        add(k, job, DDL_ALGO_MULTIRING, 0, 0)->dim_algo[k->stage] = DDL_DIM_RING;
        add(k, job, DDL_ALGO_MULTIRING, 0, 0)->dim_algo[k->stage] = DDL_DIM_RD;
    } else {
        if (job->lane_algos && several) {
            if (job->path == DDL_ALGO_MULTIRING)
                add(k, job, DDL_ALGO_MULTIRING, 0, 0);
            for (int i = 0; i < DDL_INTER_ALGOS; i++)
                if (ddl_inter_algo_candidate(&ddl_inter_algos[i], job->nnodes))
                    add(k, job, DDL_ALGO_LANE, ddl_inter_algos[i].id, 0);
        } else {
            add(k, job, job->path, 0, 0);
        }
        /* The MPI path's forms (mpi_forms.def), each up to its largest call. */
        int form_fits[DDL_MPI_FORM_COUNT] = {
#define DDL_MPI_FORM_ROW(ID, suffix, up_to, ...) \
    [DDL_MPI_FORM_##ID] = job->with_mpi && class_above_exchange_up_to(job, cls, up_to),
#include "mpi_forms.def"
#undef DDL_MPI_FORM_ROW
        };
        /* Where the owners' allreduce in halves is a candidate, the early
         * start is not (mpi/after is the MPI path without it): the halves
         * hide the signatures' round without MPI_Iallreduce's doubled bytes,
         * and on links with a burst the early start's best rounds misled the
         * choice (measured on the emulated rails, a band of each from 16 KiB
         * to 512 KiB: the early start 0.19-1.03x MPI_Allreduce, erratic;
         * the halves 0.92-1.48x; mpi/after 0.73-1.00x). */
        if (job->with_mpi && !(form_fits[DDL_MPI_FORM_AFTER] && form_fits[DDL_MPI_FORM_HALVES]))
            add(k, job, DDL_ALGO_MPI, 0, 0);
        for (int f = DDL_MPI_FORM_PLAIN + 1; f < DDL_MPI_FORM_COUNT; f++)
            if (form_fits[f])
                add(k, job, DDL_ALGO_MPI, 0, 0)->mpi_form = (ddl_mpi_form_t)f;
        if (job->chunks && several && chunked) {
            add(k, job, job->path, 0, -1);
            add(k, job, job->path, 0, 1);
        }
    }
    k->rounds = job->rounds > 0 ? job->rounds : rounds_for(cls);
    family_rounds(k, job);
    for (int i = 0; i < k->ncand; i++)
        k->fastest[i] = INFINITY;
    /* One round: the class's first call runs untimed first (candidate 0), so
     * that the first touch of the buffers and the links' warm-up (measured: a
     * first 128 MiB call takes twice a later one) count against no candidate. */
    k->calls = k->rounds == 1 ? -1 : 0;
    k->state = k->ncand > 1 ? DDL_CLASS_EXPLORING : DDL_CLASS_DECIDED;
}

/* The candidate that exploring call `call` (from 0) times: every candidate in
 * turn, round after round; with job->mpi_first the MPI path's candidates
 * first, each in a block of its rounds, then the others in turn.  An MPI-path
 * call is a few microseconds, and a lane call wakes the helpers, which spin a
 * while before they sleep: timed right after a lane call on a node with more
 * ranks than cores, the MPI path paid for them (measured on 2 virtual nodes
 * in serve mode, 4 ranks on 2 cores: a best of 80 us over 5 rounds where it
 * takes 1.2 us), and the lanes won on that. */
static int visiting(const ddl_online_job_t *job, const ddl_online_class_t *k, int call)
{
    if (!job->mpi_first) { /* in turn, round after round, while a candidate has rounds left */
        for (int round = 0;; round++)
            for (int i = 0; i < k->ncand; i++)
                if (round < rounds_of(k, i) && call-- == 0)
                    return i;
    }
    int mpi[DDL_ONLINE_MAX_CANDIDATES], other[DDL_ONLINE_MAX_CANDIDATES], nm = 0, no = 0;
    for (int i = 0; i < k->ncand; i++) {
        if (k->cand[i].algo == DDL_ALGO_MPI)
            mpi[nm++] = i;
        else
            other[no++] = i;
    }
    if (call < nm * k->mpi_rounds || no == 0)
        return mpi[(call / k->mpi_rounds) % nm];
    return other[(call - nm * k->mpi_rounds) % no];
}

int ddl_online_starts(const ddl_online_t *o, size_t bytes)
{
    return o->cls[ddl_online_class_of(bytes)].state == DDL_CLASS_NEW;
}

/* The candidate that duel call `call` (from 0) runs: the choice and its
 * rival in turn, as exploring visits candidates; with job->mpi_first in two
 * blocks, the MPI path's first (visiting() says why). */
static int dueling(const ddl_online_job_t *job, const ddl_online_class_t *k, long call)
{
    int first = k->chosen, second = k->rival;
    if (!job->mpi_first)
        return call % 2 ? second : first;
    if (k->cand[second].algo == DDL_ALGO_MPI && k->cand[first].algo != DDL_ALGO_MPI) {
        first = k->rival;
        second = k->chosen;
    }
    return call < DDL_ONLINE_RECENT ? first : second;
}

const ddl_candidate_t *ddl_online_next(ddl_online_t *o, size_t bytes, int chunked)
{
    int cls = ddl_online_class_of(bytes);
    ddl_online_class_t *k = &o->cls[cls];
    if (k->state == DDL_CLASS_NEW)
        start(k, &o->job, cls, chunked);
    if (k->state == DDL_CLASS_EXPLORING)
        return &k->cand[k->calls < 0 ? 0 : visiting(&o->job, k, k->calls)];
    if (k->confirming)
        return &k->cand[dueling(&o->job, k, k->since_check)];
    return &k->cand[k->chosen];
}

static double least(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* The middle of n times (n <= DDL_ONLINE_RECENT), the mean of the two
 * middle ones when n is even. */
static double median(const double *v, int n)
{
    double s[DDL_ONLINE_RECENT];
    for (int i = 0; i < n; i++) { /* insertion sort: a handful of numbers */
        int j = i;
        for (; j > 0 && s[j - 1] > v[i]; j--)
            s[j] = s[j - 1];
        s[j] = v[i];
    }
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int ddl_online_wants_time(const ddl_online_t *o, size_t bytes)
{
    const ddl_online_class_t *k = &o->cls[ddl_online_class_of(bytes)];
    return (k->state == DDL_CLASS_EXPLORING && k->calls >= 0) ||
           (k->state == DDL_CLASS_DECIDED &&
            (k->confirming || (k->window && k->since_check + DDL_ONLINE_RECENT >= k->window)));
}

/* A call's time as if it had moved the class's smallest size, from 1 MiB
 * up: a class spans sizes up to twice apart, and DDP's buckets of one class
 * differ (2.1 and 2.7 MB, say), called in turn each step, so a candidate
 * timed on the smaller would win on that alone (the duel, two candidates
 * in turn, would give each the same bucket every time).  From 1 MiB a call's
 * time is its bytes over the links' rate within a few percent (1 MiB on the
 * emulated 1 Gbit/s rails: 8 ms against a 12 us latency); below, where the
 * latency counts, sizes of one class are alike in time and left as timed. */
static double at_class_size(int cls, size_t bytes, double seconds)
{
    if (cls < DDL_ONLINE_PER_BYTE_CLASS || seconds < 0 || bytes == 0)
        return seconds;
    return seconds * (double)((size_t)1 << cls) / (double)bytes;
}

int ddl_online_observe(ddl_online_t *o, size_t bytes, double seconds, size_t chunk, double *v)
{
    int cls = ddl_online_class_of(bytes);
    ddl_online_class_t *k = &o->cls[cls];
    seconds = at_class_size(cls, bytes, seconds);
    if (k->state == DDL_CLASS_EXPLORING && k->calls < 0) { /* the warm-up call */
        k->calls++;
        return 0;
    }
    if (k->state == DDL_CLASS_EXPLORING) {
        int i = visiting(&o->job, k, k->calls);
        k->chunk[i] = chunk;
        k->fastest[i] = seconds < k->fastest[i] ? seconds : k->fastest[i];
        if (++k->calls < k->planned)
            return 0;
        memcpy(v, k->fastest, sizeof(double) * (size_t)k->ncand);
        return k->ncand;
    }
    if (k->state != DDL_CLASS_DECIDED || k->window == 0)
        return 0;
    if (k->confirming) {
        if (dueling(&o->job, k, k->since_check++) == k->chosen)
            k->recent[k->nrecent++] = seconds;
        else
            k->rival_times[k->nrival++] = seconds;
        if (k->since_check < 2 * DDL_ONLINE_RECENT)
            return 0;
        /* Each side's middle time (the verdict) and best (the reference
         * that later checks compare their best of DDL_ONLINE_RECENT with). */
        v[0] = median(k->recent, k->nrecent);
        v[1] = median(k->rival_times, k->nrival);
        v[2] = least(k->recent, k->nrecent);
        v[3] = least(k->rival_times, k->nrival);
        return 4;
    }
    if (seconds >= 0)
        k->recent[k->nrecent++ % DDL_ONLINE_RECENT] = seconds;
    if (++k->since_check < k->window || k->nrecent == 0)
        return 0;
    /* The best of the last few, as exploring took the best of its rounds:
     * one slow call (a preempted rank) is not drift. */
    v[0] = least(k->recent, k->nrecent < DDL_ONLINE_RECENT ? k->nrecent : DDL_ONLINE_RECENT);
    return 1;
}

/* A decided class's time, and the calls between its checks: about
 * DDL_ONLINE_CHECK_SECONDS of them.  From agreed numbers only, so every rank
 * checks at the same call. */
static void set_reference(ddl_online_class_t *k, double seconds)
{
    k->reference = seconds;
    double calls = seconds > 0 ? ceil(DDL_ONLINE_CHECK_SECONDS / seconds) : DDL_ONLINE_MIN_WINDOW;
    k->window = calls < DDL_ONLINE_MIN_WINDOW ? DDL_ONLINE_MIN_WINDOW : calls > (1 << 20) ? 1 << 20 : (long)calls;
    k->since_check = 0;
    k->nrecent = 0;
}

/* The candidate with the best agreed time after the choice (the earlier on
 * a tie); -1 when the class had one. */
static int runner_up(const ddl_online_class_t *k)
{
    int r = -1;
    for (int i = 0; i < k->ncand; i++)
        if (i != k->chosen && (r < 0 || k->agreed[i] < k->agreed[r]))
            r = i;
    return r;
}

/* The candidate the choice duels with, or -1: the best of the other family
 * (the MPI path's forms against the lanes') where it came within
 * DDL_ONLINE_DUEL_SPAN of the choice, as the families' calls vary unalike;
 * else the runner-up, where it came that close. */
static int rival_of(const ddl_online_class_t *k)
{
    int mpi = k->cand[k->chosen].algo == DDL_ALGO_MPI, other = -1;
    for (int i = 0; i < k->ncand; i++)
        if ((k->cand[i].algo == DDL_ALGO_MPI) != mpi && (other < 0 || k->agreed[i] < k->agreed[other]))
            other = i;
    double close = k->agreed[k->chosen] * (1 + DDL_ONLINE_DUEL_SPAN);
    if (other >= 0 && k->agreed[other] <= close)
        return other;
    int r = runner_up(k);
    return r >= 0 && k->agreed[r] <= close ? r : -1;
}

/* After its dimensions a class would list the multiring alone (start()). */
static int multiring_alone(const ddl_online_job_t *job)
{
    int several = job->nnodes > 1;
    return !(job->lane_algos && several) && !job->with_mpi && !(job->chunks && several);
}

ddl_online_outcome_t ddl_online_settle(ddl_online_t *o, size_t bytes, const double *agreed)
{
    ddl_online_class_t *k = &o->cls[ddl_online_class_of(bytes)];
    if (k->state == DDL_CLASS_EXPLORING) {
        memcpy(k->agreed, agreed, sizeof(double) * (size_t)k->ncand);
        k->chosen = 0;
        for (int i = 1; i < k->ncand; i++) /* ties go to the earlier candidate */
            if (agreed[i] < agreed[k->chosen])
                k->chosen = i;
        k->dim_decided = 0;
        if (k->stage && k->stage <= o->job.dims) { /* a dimension decided: the next call starts the next stage */
            k->dim_decided = k->stage;
            k->dim_algo[k->stage] = k->cand[k->chosen].dim_algo[k->stage];
            k->stage++;
            if (k->stage <= o->job.dims || !multiring_alone(&o->job)) {
                k->state = DDL_CLASS_NEW;
                return DDL_ONLINE_DIMENSION;
            }
            /* The last dimension, and the multiring is the class's one
             * candidate: its choice is this one, timed already. */
        }
        set_reference(k, agreed[k->chosen]);
        k->state = DDL_CLASS_DECIDED;
        /* A best round of a few can be luck, and the lanes' calls vary most:
         * on the emulated rails 64 KiB chose lane/rd on a round of 221 us
         * against mpi/after's 243, and then took 290-330 us per call.  So a
         * candidate that came close runs against the choice, call for call,
         * and the middle of each one's calls decides: the same statistic of
         * calls made alike, where the best of the choice's first calls
         * against the runner-up's best round kept lane/rd in 3 runs of 7. */
        int r = rival_of(k);
        if (k->window && r >= 0) {
            k->confirming = 1;
            k->rival = r;
            k->nrival = 0;
        }
        return DDL_ONLINE_DECIDED;
    }
    k->since_check = 0;
    if (k->confirming) {
        k->confirming = 0;
        if (agreed[0] > agreed[1]) {
            int was = k->chosen;
            k->chosen = k->rival;
            k->rival = was;
            set_reference(k, agreed[3]);
            return DDL_ONLINE_SWITCHED;
        }
        set_reference(k, agreed[2]);
        return DDL_ONLINE_CONFIRMED;
    }
    double ratio = agreed[0] / k->reference;
    if (ratio > 1 + o->job.drift) {
        k->state = DDL_CLASS_NEW;
        k->stage = 0; /* the dimensions too are timed again */
        memset(k->dim_algo, 0, sizeof(k->dim_algo));
        k->reference = agreed[0]; /* for the caller's message */
        return DDL_ONLINE_DRIFTED;
    }
    /* Faster: the choice is kept and its new time becomes the reference.
     * Exploring again would rarely change it, and where the exploration was
     * timed on a busy host (its reference too slow) every check would find
     * the class faster and explore it again, the lanes' calls each time. */
    if (ratio * (1 + o->job.drift) < 1) {
        set_reference(k, agreed[0]);
        return DDL_ONLINE_FASTER;
    }
    return DDL_ONLINE_STEADY;
}

/* The candidate as a tuning file's band names it: "mpi", "mpi/exchange",
 * "mpi/after", "mpi/halves", "lane/ring", "multiring" ...; returns snprintf's count. */
int ddl_candidate_name(const ddl_candidate_t *c, char *buf, size_t len)
{
    char dims[8 + 3 * DDL_GRID_MAX_DIMS] = "";
    for (int d = 1, n = 0; d <= c->ndims && d < DDL_GRID_MAX_DIMS; d++)
        n += snprintf(dims + n, sizeof(dims) - (size_t)n, "%s%s", d == 1 ? " dims=" : ",",
                      ddl_dim_algo_names[c->dim_algo[d]]);
    return snprintf(buf, len, "%s%s%s%s%s%s", ddl_algo_names[c->algo], c->lane_algo ? "/" : "",
                    c->lane_algo ? ddl_inter_algo_names[c->lane_algo] : "", c->mpi_form ? "/" : "",
                    ddl_mpi_form_names[c->mpi_form], dims);
}

void ddl_candidate_describe(const ddl_candidate_t *c, size_t chunk, char *buf, size_t len)
{
    int n = ddl_candidate_name(c, buf, len);
    if (c->algo != DDL_ALGO_MPI && chunk && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " chunk=%zuK", chunk >> 10);
}

void ddl_online_describe(const ddl_online_class_t *k, int cand, char *buf, size_t len)
{
    ddl_candidate_describe(&k->cand[cand], k->chunk[cand], buf, len);
}

const char *ddl_online_timings(const ddl_online_class_t *k, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0, n = 0; i < k->ncand && n >= 0 && (size_t)n < len; i++) {
        char name[64];
        ddl_online_describe(k, i, name, sizeof(name));
        n += snprintf(buf + n, len - (size_t)n, "%s%s %.1f us", i ? ", " : "", name, k->agreed[i] * 1e6);
    }
    return buf;
}

/* Two decided classes that one band can hold. */
static int same_choice(const ddl_online_class_t *a, const ddl_online_class_t *b)
{
    const ddl_candidate_t *x = &a->cand[a->chosen], *y = &b->cand[b->chosen];
    return x->algo == y->algo && x->lane_algo == y->lane_algo && x->mpi_form == y->mpi_form &&
           x->ndims == y->ndims && memcmp(x->dim_algo, y->dim_algo, sizeof(x->dim_algo)) == 0 &&
           a->chunk[a->chosen] == b->chunk[b->chosen];
}

/* A decided class that was timed: more than one candidate, or the multiring's
 * dimensions (a class with one candidate alone taught nothing). */
static int learnt(const ddl_online_class_t *k)
{
    return k->state == DDL_CLASS_DECIDED && (k->ncand > 1 || k->stage > 0);
}

int ddl_online_write(const ddl_online_t *o, FILE *f)
{
    int bands = 0;
    for (int i = 0; i < DDL_ONLINE_CLASSES;) {
        const ddl_online_class_t *k = &o->cls[i];
        if (!learnt(k)) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < DDL_ONLINE_CLASSES && learnt(&o->cls[j]) && same_choice(k, &o->cls[j]))
            j++;
        const ddl_candidate_t *c = &k->cand[k->chosen];
        char algo[64];
        ddl_candidate_name(c, algo, sizeof(algo));
        ddl_tuning_write_band(f, (size_t)1 << i, j >= DDL_ONLINE_CLASSES ? SIZE_MAX : (size_t)1 << j, algo,
                              c->algo == DDL_ALGO_MPI ? 0 : k->chunk[k->chosen]);
        bands++;
        i = j;
    }
    return bands;
}
