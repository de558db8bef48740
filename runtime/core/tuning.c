/* SPDX-License-Identifier: Apache-2.0 */
/* The tuning file (tuning.h): parsing bands and link lines, writing them, and
 * the cost model's default numbers.  Uses core's parsers and the settings'
 * values (choices.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "choices.h"
#include "ddl_limits.h"
#include "log.h"
#include "parse.h"
#include "tuning.h"

void ddl_model_defaults(ddl_model_t *m)
{
    for (int d = 0; d < DDL_GRID_MAX_DIMS; d++) {
        m->link[d] = (ddl_link_t){DDL_MODEL_ALPHA_DEFAULT, DDL_MODEL_BETA_DEFAULT};
        m->measured[d] = 0;
    }
    m->gamma = DDL_MODEL_GAMMA_DEFAULT;
}

static int parse_algo(const char *word, ddl_band_t *b)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%s", word);
    char *slash = strchr(buf, '/');
    if (slash)
        *slash = '\0';
    int idx;
    if (ddl_parse_enum(buf, ddl_algo_names, &idx) != 0 || idx == 0)
        return -1;
    b->algo = idx;
    b->lane_algo = 0;
    b->mpi_form = DDL_MPI_FORM_PLAIN;
    if (slash && idx == DDL_ALGO_MPI) {
        int form;
        if (ddl_parse_enum(slash + 1, ddl_mpi_form_names, &form) != 0 || form == DDL_MPI_FORM_PLAIN)
            return -1;
        b->mpi_form = form;
        return 0;
    }
    if (slash) {
        if (idx != DDL_ALGO_LANE || ddl_parse_enum(slash + 1, ddl_inter_algo_names, &idx) != 0 || idx == 0)
            return -1;
        b->lane_algo = idx;
    }
    return 0;
}

static int parse_range(const char *word, ddl_band_t *b)
{
    char lo[32], hi[32];
    const char *dash = strchr(word, '-');
    if (!dash || (size_t)(dash - word) >= sizeof(lo) || strlen(dash + 1) >= sizeof(hi))
        return -1;
    memcpy(lo, word, (size_t)(dash - word));
    lo[dash - word] = '\0';
    snprintf(hi, sizeof(hi), "%s", dash + 1);
    if (ddl_parse_size(lo, &b->min) != 0)
        return -1;
    if (strcasecmp(hi, "inf") == 0)
        b->max = SIZE_MAX;
    else if (ddl_parse_size(hi, &b->max) != 0)
        return -1;
    return b->max > b->min ? 0 : -1;
}

const char *const ddl_dim_algo_names[] = {"ring", "rd", NULL};

/* "ring,rd,..." -> b->dim_algo[1..]. */
static int parse_dims(const char *list, ddl_band_t *b)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", list);
    char *save;
    b->ndims = 0;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int idx;
        if (b->ndims + 1 >= DDL_GRID_MAX_DIMS || ddl_parse_enum(w, ddl_dim_algo_names, &idx) != 0)
            return -1;
        b->dim_algo[++b->ndims] = (unsigned char)idx;
    }
    return b->ndims > 0 && b->algo == DDL_ALGO_MULTIRING ? 0 : -1;
}

/* key=number with 1e-6 <= number <= 1e9 (the strict positive-number parser
 * that reads DDL_TIMEOUT's seconds): latencies up to 1000 s, bandwidths from
 * 1 byte/s to 1 PB/s, so the model's arithmetic stays finite. */
static int parse_number(const char *word, const char *key, double *out)
{
    size_t k = strlen(key);
    if (strncmp(word, key, k) != 0 || word[k] != '=')
        return -1;
    return ddl_parse_seconds(word + k + 1, out) != 0 || *out < 1e-6 || *out > 1e9 ? -1 : 0;
}

static ddl_status_t parse_link(char **words, int nw, ddl_tuning_t *t, int lineno);
static ddl_status_t parse_reduce(char **words, int nw, ddl_tuning_t *t, int lineno);
static ddl_status_t parse_band(char **words, int nw, ddl_tuning_t *t, int lineno);

/* The kinds of line, one row each: the parser dispatches on the first word
 * (a band starts with its size range), and ddl-tune writes every line with the
 * row's format (ddl_tuning_write), so what one writes the other reads. */
static const struct {
    ddl_tuning_line_t kind;
    const char *keyword; /* NULL: a band */
    const char *syntax;  /* for messages */
    const char *format;  /* what ddl_tuning_write prints */
    ddl_status_t (*parse)(char **words, int nw, ddl_tuning_t *t, int lineno);
} line_kinds[] = {
    {DDL_TUNING_LINK, "link", "link DIM latency_us=NUMBER mbytes_per_s=NUMBER",
     "link %d latency_us=%.1f mbytes_per_s=%.1f\n", parse_link},
    {DDL_TUNING_REDUCE, "reduce", "reduce mbytes_per_s=NUMBER", "reduce mbytes_per_s=%.0f\n", parse_reduce},
    {DDL_TUNING_BAND, NULL, "MIN-MAX ALGO[/LANE_ALGO|/exchange|/after|/halves] [chunk=SIZE] [dims=ALGO,...]",
     "%s-%s %s%s\n", parse_band},
};
enum { NKINDS = sizeof(line_kinds) / sizeof(line_kinds[0]) };

/* link DIM latency_us=X mbytes_per_s=Y: the cost model's link of grid dimension DIM. */
static ddl_status_t parse_link(char **words, int nw, ddl_tuning_t *t, int lineno)
{
    double lat, bw;
    long dim;
    if (nw != 4 || ddl_parse_long(words[1], 0, DDL_GRID_MAX_DIMS - 1, &dim) != 0 ||
        parse_number(words[2], "latency_us", &lat) != 0 || parse_number(words[3], "mbytes_per_s", &bw) != 0)
        return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: expected '%s' with DIM from 0 to %d and NUMBERs from 1e-6 to "
                        "1e9", lineno, line_kinds[DDL_TUNING_LINK].syntax, DDL_GRID_MAX_DIMS - 1);
    t->model.link[dim] = (ddl_link_t){lat * 1e-6, 1.0 / (bw * 1e6)};
    t->model.measured[dim] = 1;
    return DDL_OK;
}

/* reduce mbytes_per_s=Z: the host reduction's speed. */
static ddl_status_t parse_reduce(char **words, int nw, ddl_tuning_t *t, int lineno)
{
    double bw;
    if (nw != 2 || parse_number(words[1], "mbytes_per_s", &bw) != 0)
        return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: expected '%s' (NUMBER from 1e-6 to 1e9)", lineno,
                        line_kinds[DDL_TUNING_REDUCE].syntax);
    t->model.gamma = 1.0 / (bw * 1e6);
    return DDL_OK;
}

/* MIN-MAX ALGO[/LANE_ALGO] [chunk=SIZE] [dims=ALGO,...]: a size band. */
static ddl_status_t parse_band(char **words, int nw, ddl_tuning_t *t, int lineno)
{
    if (t->nbands == DDL_TUNING_MAX_BANDS)
        return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: more than %d bands", lineno, DDL_TUNING_MAX_BANDS);
    ddl_band_t *b = &t->bands[t->nbands];
    memset(b, 0, sizeof(*b));
    if (parse_range(words[0], b) != 0)
        return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: '%s' is not a size range such as 64K-16M or 16M-inf", lineno,
                        words[0]);
    if (nw < 2 || parse_algo(words[1], b) != 0)
        return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: '%s' is not an algorithm (mpi, mpi/exchange, mpi/after, "
                        "mpi/halves, lane, lane/ring, lane/rd, lane/rab, multiring)", lineno, nw < 2 ? "" : words[1]);
    for (int i = 2; i < nw; i++) {
        if (strncmp(words[i], "chunk=", 6) == 0) {
            if (ddl_parse_size(words[i] + 6, &b->chunk) != 0 || b->chunk < 4096)
                return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: '%s' is not chunk=SIZE with SIZE at least 4K", lineno,
                                words[i]);
        } else if (strncmp(words[i], "dims=", 5) == 0) {
            if (parse_dims(words[i] + 5, b) != 0)
                return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: '%s' is not dims=ALGO,... (ring or rd per grid "
                                "dimension, multiring only)", lineno, words[i]);
        } else {
            return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: '%s' is neither chunk=SIZE nor dims=ALGO,... (a band "
                            "reads '%s')", lineno, words[i], line_kinds[DDL_TUNING_BAND].syntax);
        }
    }
    if (t->nbands > 0 && b->min < t->bands[t->nbands - 1].max)
        return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: the band starts below the end of the previous one", lineno);
    b->line = lineno;
    t->nbands++;
    return DDL_OK;
}

ddl_status_t ddl_tuning_parse(const char *text, ddl_tuning_t *t)
{
    memset(t, 0, sizeof(*t));
    ddl_model_defaults(&t->model);
    int lineno = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        char line[256];
        lineno++;
        if (len >= sizeof(line))
            return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: longer than %zu characters", lineno, sizeof(line) - 1);
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (p[len] == '\n');
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save, *words[5];
        int nw = 0;
        for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
            if (nw == 5)
                return ddl_fail(DDL_ERR_INVALID_ARG, "line %d: too many fields (expected: %s)", lineno,
                                line_kinds[DDL_TUNING_BAND].syntax);
            words[nw++] = w;
        }
        if (nw == 0)
            continue;
        int k = 0;
        while (k < NKINDS && line_kinds[k].keyword && strcmp(words[0], line_kinds[k].keyword) != 0)
            k++;
        ddl_status_t st = line_kinds[k < NKINDS ? k : DDL_TUNING_BAND].parse(words, nw, t, lineno);
        if (st != DDL_OK)
            return st;
    }
    return DDL_OK;
}

void ddl_tuning_write_link(FILE *f, int dim, const ddl_link_t *link)
{
    fprintf(f, line_kinds[DDL_TUNING_LINK].format, dim, link->alpha * 1e6, 1e-6 / link->beta);
}

void ddl_tuning_write_reduce(FILE *f, double gamma)
{
    fprintf(f, line_kinds[DDL_TUNING_REDUCE].format, 1e-6 / gamma);
}

void ddl_tuning_write_band(FILE *f, size_t min, size_t max, const char *algo, size_t chunk)
{
    char lo[32], hi[32], extra[48] = "";
    snprintf(lo, sizeof(lo), "%zu", min);
    if (max == SIZE_MAX)
        snprintf(hi, sizeof(hi), "inf");
    else
        snprintf(hi, sizeof(hi), "%zu", max);
    if (chunk)
        snprintf(extra, sizeof(extra), " chunk=%zuK", chunk >> 10);
    fprintf(f, line_kinds[DDL_TUNING_BAND].format, lo, hi, algo, extra);
}

ddl_status_t ddl_tuning_load(const char *path, ddl_tuning_t *t)
{
    /* Read whole, and only a regular file: a directory or a FIFO is a mistake in
     * DDL_TUNING_FILE, and a NUL byte would silently end the text early. */
    static char text[DDL_TUNING_FILE_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return ddl_fail(DDL_ERR_INVALID_ARG, "cannot open the tuning file %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ddl_fail(DDL_ERR_INVALID_ARG, "the tuning file %s is not a regular file (a %s)", path,
                        S_ISDIR(sb.st_mode) ? "directory" : "device, FIFO or socket");
    }
    size_t n = 0;
    ssize_t got = 1;
    while (n < sizeof(text) && (got = read(fd, text + n, sizeof(text) - n)) > 0)
        n += (size_t)got;
    int err = errno;
    close(fd);
    if (got < 0)
        return ddl_fail(DDL_ERR_INVALID_ARG, "cannot read the tuning file %s: %s", path, strerror(err));
    if (n > DDL_TUNING_FILE_MAX)
        return ddl_fail(DDL_ERR_INVALID_ARG, "the tuning file %s is larger than %d KiB", path,
                        DDL_TUNING_FILE_MAX / 1024);
    const char *nul = memchr(text, '\0', n);
    if (nul)
        return ddl_fail(DDL_ERR_INVALID_ARG, "the tuning file %s holds a NUL byte at offset %zu: it is not a text file",
                        path, (size_t)(nul - text));
    text[n] = '\0';
    if (ddl_tuning_parse(text, t) != DDL_OK)
        return ddl_fail(DDL_ERR_INVALID_ARG, "tuning file %s, %s", path, ddl_last_error());
    return DDL_OK;
}

const ddl_band_t *ddl_tuning_find(const ddl_tuning_t *t, size_t bytes)
{
    for (int i = 0; i < t->nbands; i++)
        if (bytes >= t->bands[i].min && bytes < t->bands[i].max)
            return &t->bands[i];
    return NULL;
}

uint64_t ddl_tuning_digest(const ddl_tuning_t *t)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < t->nbands; i++) {
        const ddl_band_t *b = &t->bands[i];
        uint64_t v[7] = {b->min,  b->max,           (uint64_t)b->algo, (uint64_t)b->lane_algo,
                         b->chunk, (uint64_t)b->ndims, (uint64_t)b->mpi_form};
        for (int k = 0; k < 7; k++)
            h = (h ^ v[k]) * 0x100000001b3ull;
        for (int d = 1; d <= b->ndims; d++)
            h = (h ^ b->dim_algo[d]) * 0x100000001b3ull;
    }
    /* The model's numbers, to the nanosecond and the byte per second. */
    for (int d = 0; d < DDL_GRID_MAX_DIMS; d++) {
        uint64_t v[2] = {(uint64_t)ddl_double_to_ll(t->model.link[d].alpha * 1e9, 0, LLONG_MAX),
                         (uint64_t)ddl_double_to_ll(1.0 / t->model.link[d].beta, 0, LLONG_MAX)};
        h = (h ^ v[0]) * 0x100000001b3ull;
        h = (h ^ v[1]) * 0x100000001b3ull;
    }
    h = (h ^ (uint64_t)ddl_double_to_ll(1.0 / t->model.gamma, 0, LLONG_MAX)) * 0x100000001b3ull;
    return h;
}
