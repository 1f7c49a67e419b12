#define _DEFAULT_SOURCE /* syscall */
#include "cluster_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>   /* CLONE_NEWNET: <sched.h> is coordinator/sched.h on this include path */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "book.h"
#include "clock.h"
#include "game.h"
#include "gamepack.h"
#include "games.h"
#include "keys.h"
#include "nnue.h"
#include "rng.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_tasks.h"

void cu_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

double cu_now(void) { return (double)clock_now_us() / 1e6; }

int cu_tune(char *out, size_t size, const char *args, const char *logfile)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s", XQF_BIN, args);
    return cu_sh(out, size, cmd, logfile);
}

int cu_sh(char *out, size_t size, const char *command, const char *logfile)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s 2>>'%s'", command, logfile);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -2;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Appends one record (moves-only form) with result (1 Red won, 2 Black
 * won, 3 draw) from opening line (NULL: the start position): its FEN and
 * its moves, flagged as the opening's, as a worker records them.
 */
static void record_add(uint8_t *buf, size_t *len, int result, const char *line)
{
    static const char START[] = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
    XqfOpening o = { .count = 0 };
    size_t fen = line ? strcspn(line, "#;\r\n") : sizeof START - 1;
    if (line) {
        const char *moves = strstr(line, " moves");
        fen = moves && (size_t)(moves - line) < fen ? (size_t)(moves - line) : fen;
        while (fen > 0 && (line[fen - 1] == ' ' || line[fen - 1] == '\t'))
            fen--;
        if (xqf_opening_parse(line, &o) != 0)
            o.count = 0;
    }
    fen = fen > 255 ? 255 : fen;
    uint32_t n = 3 + (uint32_t)fen + 2 + 2 * (uint32_t)o.count;
    uint8_t *p = buf + *len;
    p[0] = (uint8_t)n, p[1] = (uint8_t)(n >> 8), p[2] = p[3] = 0;
    p[4] = (uint8_t)(result | XQF_GAME_MOVES);
    p[5] = 1;                                 /* a reason */
    p[6] = (uint8_t)fen;
    memcpy(p + 7, line ? line : START, fen);
    p[7 + fen] = (uint8_t)o.count, p[8 + fen] = (uint8_t)(o.count >> 8);
    for (int i = 0; i < o.count; i++) {
        unsigned ply = o.plies[i] | XQF_GAME_BOOK;
        p[9 + fen + 2 * i] = (uint8_t)ply, p[10 + fen + 2 * i] = (uint8_t)(ply >> 8);
    }
    *len += 4 + n;
}

uint8_t *cu_records_for(const StoreCounts *now, const StoreCounts *before, size_t *len)
{
    return cu_records_from(now, before, NULL, len);
}

uint8_t *cu_records_from(const StoreCounts *now, const StoreCounts *before, const char *const *openings, size_t *len)
{
    const StoreCounts zero = { 0 };
    if (!before)
        before = &zero;
    int64_t d[5], wins = now->wins - before->wins;
    for (int i = 0; i < 5; i++)
        d[i] = now->penta[i] - before->penta[i];
    int64_t wl = wins - 2 * d[4] - d[3];
    /* pairs in order: WW, WD, WL, DD, DL, LL; the first player's results of its two games */
    int64_t n[6] = { d[4], d[3], wl, d[2] - wl, d[1], d[0] };
    static const int FIRST[6][2] = { { 2, 2 }, { 2, 1 }, { 2, 0 }, { 1, 1 }, { 1, 0 }, { 0, 0 } };
    int64_t pairs = 0;
    for (int k = 0; k < 6; k++)
        pairs += n[k] > 0 ? n[k] : 0;
    *len = 0;
    if (pairs == 0)
        return NULL;
    /* a record: its length, head, FEN (255 bytes at most), ply count and the opening's moves */
    uint8_t *buf = malloc((size_t)pairs * 2 * (4 + XQF_GAME_HEAD + 255 + 2 + 2 * XQF_OPENING_PLIES_MAX));
    if (!buf)
        return NULL;
    int64_t pair = 0;
    for (int k = 0; k < 6; k++)
        for (int64_t i = 0; i < n[k]; i++, pair++)
            for (int g = 0; g < 2; g++) {
                int pts = FIRST[k][g];     /* 2 win, 1 draw, 0 loss of the first player */
                bool first_red = g == 0;
                record_add(buf, len, pts == 1 ? 3 : (pts == 2) == first_red ? 1 : 2,
                           openings ? openings[pair] : NULL);
            }
    return buf;
}

StoreReport cu_report(Store *s, int64_t worker, int64_t task, int64_t token, const StoreCounts *now,
                      const StoreCounts *before, int64_t lease_ms, int64_t *run, bool *task_done)
{
    size_t len;
    uint8_t *games = cu_records_for(now, before, &len);
    StoreReportItem it = { .worker = worker, .task = task, .token = token, .counts = *now, .games = games,
                           .games_len = len, .games_from = before ? before->pairs : 0 };
    int rc = store_report_batch(s, &it, 1, lease_ms);
    free(games);
    if (run)
        *run = it.run;
    if (task_done)
        *task_done = it.task_done;
    return rc == 0 ? it.status : (StoreReport)-1;
}

int cu_engine_copy(const char *path, int n)
{
    const char *engine = getenv("XQF_TEST_ENGINE");
    char from[512], cmd[2048];
    if (engine && *engine)
        snprintf(from, sizeof from, "%s", engine);
    else
        snprintf(from, sizeof from, "%s/xqf-engine", XQF_BIN);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && head -c %d /dev/zero >> '%s'", from, path, n, path);
    return system(cmd) == 0 ? 0 : -1;
}

int cu_toy_engine(char commit[41])
{
    char path[512], cmd[4096], out[4096];
    long long bench = 0;
    snprintf(path, sizeof path, "%s/toy/engine.bin", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/toy' && git -C '%s/toy' init -q", cu_fx.dir, cu_fx.dir);
    if (cu_sh(out, sizeof out, cmd, cu_fx.logfile) != 0 || cu_engine_copy(path, 0) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "'%s' bench 5 | grep 'Nodes searched'", path);
    const char *at = cu_sh(out, sizeof out, cmd, cu_fx.logfile) == 0 ? strstr(out, "Nodes searched: ") : NULL;
    if (!at || sscanf(at + 16, "%lld", &bench) != 1)
        return -1;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && echo 1 > toy/tag && printf 'EXE = toy\\n$(EXE): engine.bin tag\\n\\tcat engine.bin tag > "
             "$(EXE) && chmod +x $(EXE)\\n' > toy/Makefile && git -C toy add -A && git -C toy -c user.name=t "
             "-c user.email=t@t commit -q -m 'A\n\nBench: %lld' && git -C toy rev-parse HEAD",
             cu_fx.dir, bench);
    if (cu_sh(out, sizeof out, cmd, cu_fx.logfile) != 0 || strlen(out) < 40)
        return -1;
    snprintf(commit, 41, "%.40s", out);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s/xqf-tune' engine add toy --repo '%s/toy' --bench '<binary> bench 5 | sed \"s/: /  : /\"' "
             "--db '%s' >/dev/null && '%s/xqf-keys' sign-new operator.key >/dev/null",
             cu_fx.dir, XQF_BIN, cu_fx.dir, cu_fx.db, XQF_BIN);
    return cu_sh(out, sizeof out, cmd, cu_fx.logfile) == 0 ? 0 : -1;
}

int cu_sha256(const char *path, char out[65])
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    FILE *p = popen(cmd, "r");
    int rc = p && fscanf(p, "%64s", out) == 1 ? 0 : -1;
    if (p && pclose(p) != 0)
        rc = -1;
    return rc;
}

int64_t cu_build_add(Store *s, const StoreBuild *b)
{
    FILE *f = fopen(b->path, "rb");
    char *bytes = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (bytes = malloc((size_t)len + 1)) && fread(bytes, 1, (size_t)len, f) != (size_t)len)
        len = -1;
    if (f)
        fclose(f);
    int64_t id = -1;
    if (!bytes || len < 0 || store_add_build(s, b, &id) != 0 || store_build_blob(s, id, bytes, (size_t)len) != 0)
        id = -1;
    free(bytes);
    return id;
}

Store *cu_store_fresh(char *out, size_t size, char *name, size_t name_size)
{
    if (cu_db_create(out, size, name, name_size) != 0)
        return NULL;
    Store *s = store_new(out);
    if (s)
        store_set_migrate(s, true);
    if (s && store_connect(s) != 0)
        store_destroy(&s);
    return s;
}

CuFixture cu_fx;

void cu_fixture_init(void)
{
    CuFixture *f = &cu_fx;
    *f = (CuFixture){ .port = cu_free_port() };
    snprintf(f->dir, sizeof f->dir, "/tmp/xqf-test-XXXXXX");
    if (!mkdtemp(f->dir)) {
        fprintf(stderr, "cannot make %s: %s\n", f->dir, strerror(errno));
        f->failed = true;
    }
    snprintf(f->logfile, sizeof f->logfile, "%.120s/log", f->dir);
    if (!getenv("XQF_TEST_DB") || !*getenv("XQF_TEST_DB"))
        return;
    if (!(f->store = cu_store_fresh(f->db, sizeof f->db, f->dbname, sizeof f->dbname))) {
        fprintf(stderr, "cannot create and migrate a test database on %s\n", getenv("XQF_TEST_DB"));
        f->failed = true;
    }
    setenv("XQF_DB", f->db, 1);
    f->roles = f->store && cu_roles_ready(f->store, f->db);
    /* a keyword given twice: libpq takes the last, so the user appended wins over XQF_TEST_DB's */
    snprintf(f->db_coordinator, sizeof f->db_coordinator, "%.511s%s", f->db, f->roles ? " user=xqf-coordinator" : "");
    snprintf(f->db_web, sizeof f->db_web, "%.511s%s", f->db, f->roles ? " user=xqf-web" : "");
    snprintf(f->db_builder, sizeof f->db_builder, "%.511s%s", f->db, f->roles ? " user=xqf-builder" : "");
    snprintf(f->db_signer, sizeof f->db_signer, "%.511s%s", f->db, f->roles ? " user=xqf-signer" : "");
    snprintf(f->db_auditor, sizeof f->db_auditor, "%.511s%s", f->db, f->roles ? " user=xqf-auditor" : "");
}

bool cu_roles_ready(Store *s, const char *db)
{
    static int ready = -1;           /* roles are the cluster's: once a process */
    if (ready >= 0)
        return ready;
    char error[256], conninfo[600];
    const char *sql =
        "DO $$ DECLARE p text; BEGIN FOREACH p IN ARRAY ARRAY['coordinator', 'web', 'builder', 'signer', 'auditor'] LOOP "
        "  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'xqf-' || p) THEN "
        "    BEGIN EXECUTE format('CREATE ROLE %I LOGIN', 'xqf-' || p); "
        "    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; "
        "  END IF; "
        "  IF NOT pg_has_role('xqf-' || p, 'xqf_' || p, 'MEMBER') THEN "
        "    BEGIN EXECUTE format('GRANT %I TO %I', 'xqf_' || p, 'xqf-' || p); "
        "    EXCEPTION WHEN unique_violation THEN NULL; END; "
        "  END IF; "
        "END LOOP; END $$";
    ready = store_exec(s, sql, error, sizeof error) == 0;
    if (!ready)
        fprintf(stderr, "cannot make the programs' login roles (%s): the programs connect as the owner\n", error);
    snprintf(conninfo, sizeof conninfo, "%.511s user=xqf-web", db);
    Store *web = ready ? store_new(conninfo) : NULL;
    if (web && store_connect(web) != 0) {
        fprintf(stderr, "cannot sign in as xqf-web: the programs connect as the owner\n");
        ready = 0;
    }
    store_destroy(&web);
    return ready;
}

void cu_fixture_fini(void)
{
    CuFixture *f = &cu_fx;
    cu_stop_all();
    store_destroy(&f->store);
    if (f->dbname[0])
        cu_db_drop(f->dbname);
    f->dbname[0] = '\0';
}

void cu_fixture_fini_rmdir(void)
{
    cu_fixture_fini();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cu_fx.dir);
    if (cu_fx.dir[0] && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", cu_fx.dir);
}

int cu_db_create(char *out, size_t size, char *name, size_t name_size)
{
    static int counter = 0;
    const char *base = getenv("XQF_TEST_DB");
    if (!base)
        return -1;
    snprintf(name, name_size, "xqf_test_%ld_%d", (long)getpid(), counter++);
    store_admin_database(base, name, true);
    if (store_admin_database(base, name, false) != 0)
        return -1;
    snprintf(out, size, "%s dbname=%s", base, name);
    return 0;
}

void cu_db_drop(const char *name)
{
    const char *base = getenv("XQF_TEST_DB");
    if (base)
        store_admin_database(base, name, true);
}

int cu_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

extern char **environ;
static const char *const NO_ENV[] = { NULL };

/*
 * The environment of a child: this process's, with the "NAME=value" entries
 * of env replacing or added to it (malloc'd array; the strings are not copied).
 */
static char **child_environment(const char *const env[])
{
    size_t n = 0, extra = 0;
    while (environ[n])
        n++;
    while (env[extra])
        extra++;
    char **out = malloc(sizeof *out * (n + extra + 1));
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; j < extra && !replaced; j++) {
            size_t len = strcspn(env[j], "=");
            replaced = strncmp(environ[i], env[j], len) == 0 && environ[i][len] == '=';
        }
        if (!replaced)
            out[k++] = environ[i];
    }
    for (size_t j = 0; j < extra; j++)
        out[k++] = (char *)env[j];
    out[k] = NULL;
    return out;
}

/*
 * Starts program; with env (may be empty), in that environment and killed
 * when this process dies; with netns (NULL: this one), in that network
 * namespace of `ip netns` (its child exits 127 when it cannot enter it).
 */
static pid_t spawn_in(const char *netns, const char *program, const char *log, const char *const args[],
                      const char *const env[])
{
    char path[1024], ns_path[300] = "";
    snprintf(path, sizeof path, "%s/%s", XQF_BIN, program);
    if (netns)
        snprintf(ns_path, sizeof ns_path, "/run/netns/%s", netns);
    /* built before fork: the child of a threaded process may only call async-signal-safe functions */
    char **envp = env ? child_environment(env) : environ;
    if (!envp)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        if (envp != environ)
            free(envp);
        return pid;
    }
    /* a test killed at its timeout takes its processes with it */
    if (env && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent))
        _exit(127);
    if (ns_path[0]) {
        int ns = open(ns_path, O_RDONLY | O_CLOEXEC);
        if (ns < 0 || syscall(SYS_setns, ns, CLONE_NEWNET) != 0)
            _exit(127);
        close(ns);
    }
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 2);
        dup2(fd, 1);
        close(fd);
    }
    char *argv[32];
    int n = 0;
    argv[n++] = path;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    execve(path, argv, envp);
    _exit(127);
}

static pid_t spawn(const char *program, const char *log, const char *const args[], const char *const env[])
{
    return spawn_in(NULL, program, log, args, env);
}

pid_t cu_spawn(const char *program, const char *log, const char *const args[])
{
    return spawn(program, log, args, NULL);
}

pid_t cu_spawn_netns(const char *netns, const char *program, const char *log, const char *const args[])
{
    return spawn_in(netns, program, log, args, NO_ENV);
}

pid_t cu_spawn_env(const char *program, const char *log, const char *const args[], const char *const env[])
{
    return spawn(program, log, args, env ? env : NO_ENV);
}

bool cu_ended(pid_t pid, int *status)
{
    return waitpid(pid, status, WNOHANG) == pid;
}

int cu_stop(pid_t pid, int sig)
{
    int status = 0;
    kill(pid, sig);
    for (int i = 0; i < 1000; i++) {
        if (cu_ended(pid, &status))
            return status;
        cu_sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return status;
}

/* A coordinator on 127.0.0.1:port (env: see spawn). */
static pid_t coordinator_env(const char *db, int port, const char *lease_s, const char *log, const char *const env[])
{
    char bind[64];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", port);
    const char *args[] = { "--bind", bind, "--db", db, "--lease", lease_s, NULL };
    return spawn("xqf-coordinator", log, args, env);
}

/* A worker connecting to 127.0.0.1:port, with the options extra (NULL-terminated; NULL none) (env: see spawn). */
static pid_t worker_env(int port, const char *name, int concurrency, const char *log, const char *const env[],
                        const char *const extra[])
{
    char ep[64], conc[16];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    snprintf(conc, sizeof conc, "%d", concurrency);
    const char *args[24] = { "--connect", ep, "--name", name, "--concurrency", conc, NULL };
    for (int i = 0, n = 6; extra && extra[i] && n < 23; i++)
        args[n++] = extra[i];
    return spawn("xqf-worker", log, args, env);
}

pid_t cu_coordinator(const char *db, int port, const char *lease_s, const char *log)
{
    return coordinator_env(db, port, lease_s, log, NULL);
}

pid_t cu_coordinator_env(const char *db, int port, const char *lease_s, const char *log, const char *const env[])
{
    return coordinator_env(db, port, lease_s, log, env ? env : NO_ENV);
}

pid_t cu_worker(int port, const char *name, int concurrency, const char *log)
{
    return worker_env(port, name, concurrency, log, NULL, NULL);
}

pid_t cu_worker_args(int port, const char *name, int concurrency, const char *log, const char *const extra[])
{
    return worker_env(port, name, concurrency, log, NULL, extra);
}

pid_t cu_worker_env(int port, const char *name, int concurrency, const char *log, const char *const env[])
{
    return worker_env(port, name, concurrency, log, env ? env : NO_ENV, NULL);
}

pid_t cu_proxy(int listen_port, int target_port, const char *const opts[], const char *log)
{
    char listen[16], target[16];
    snprintf(listen, sizeof listen, "%d", listen_port);
    snprintf(target, sizeof target, "%d", target_port);
    const char *args[32] = { "--listen", listen, "--connect", target };
    int n = 4;
    for (int i = 0; opts && opts[i] && n < 31; i++)
        args[n++] = opts[i];
    args[n] = NULL;
    return cu_spawn_env("xqf-faultproxy", log, args, NULL);
}

int cu_book(const char **book, int count)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/ops/books/default.book", XQF_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    if (!f || count > CU_BOOK_MAX) {
        if (f)
            fclose(f);
        return -1;
    }
    static char lines[CU_BOOK_MAX][512];
    int n = 0;
    while (n < count && fgets(lines[n], sizeof lines[n], f)) {
        if (lines[n][0] == '#' || lines[n][0] == '\n')
            continue;
        lines[n][strcspn(lines[n], "\n")] = '\0';
        book[n] = lines[n];
        n++;
    }
    fclose(f);
    return n;
}

/* An SPRT run over the first book_lines openings of the book. */
static int64_t sprt_over(Store *s, const char *test_params, int pairs_per_task, int book_lines,
                         int64_t max_pairs, int64_t nodes, double elo0, double elo1, const char *owner, bool pending)
{
    const char *book[CU_BOOK_MAX];
    int n = cu_book(book, book_lines);
    if (n < 0)
        return -1;
    StoreSprtSpec spec = { 0 };
    spec.name = "test run";
    spec.test_params = test_params;
    spec.base_params = "";
    spec.book_name = "default.book";
    spec.book = book;
    spec.book_lines = n;
    spec.seed = 7;
    spec.nodes = nodes;
    spec.margin_ms = 100;
    spec.pairs_per_task = pairs_per_task;
    spec.max_pairs = max_pairs;
    spec.elo0 = elo0;
    spec.elo1 = elo1;
    spec.alpha = 0.05;
    spec.beta = 0.05;
    spec.owner = owner;
    spec.pending = pending;
    int64_t id;
    return store_create_sprt(s, &spec, &id) == 0 ? id : -1;
}

int64_t cu_sprt(Store *s, const char *test_params, int pairs_per_task, int64_t max_pairs,
                int64_t nodes, double elo0, double elo1)
{
    return sprt_over(s, test_params, pairs_per_task, 100, max_pairs, nodes, elo0, elo1, NULL, false);
}

int64_t cu_sprt_of(Store *s, const char *owner, bool pending, const char *test_params, int pairs_per_task,
                   int64_t max_pairs, int64_t nodes, double elo0, double elo1)
{
    return sprt_over(s, test_params, pairs_per_task, 100, max_pairs, nodes, elo0, elo1, owner, pending);
}

int64_t cu_sprt_openings(Store *s, const char *test_params, int pairs_per_task, int openings,
                         int64_t nodes, double elo0, double elo1)
{
    const char *book[CU_BOOK_MAX];
    if (openings < 1 || cu_book(book, openings) != openings)
        return -1;
    return sprt_over(s, test_params, pairs_per_task, openings, openings, nodes, elo0, elo1, NULL, false);
}

bool cu_wait_finished(Store *s, int64_t run, double timeout_s, StoreRun *out)
{
    double end = cu_now() + timeout_s;
    while (cu_now() < end) {
        if (!store_ok(s))
            store_connect(s);
        StoreRun r;
        if (store_ok(s) && store_load_run(s, run, &r, false) == 1 && strcmp(r.state, "active") != 0) {
            if (out)
                *out = r;
            return true;
        }
        cu_sleep_ms(100);
    }
    return false;
}

bool cu_wait_pairs(Store *s, int64_t run, int64_t pairs, double timeout_s)
{
    double end = cu_now() + timeout_s;
    while (cu_now() < end) {
        if (!store_ok(s))
            store_connect(s);
        StoreRun r;
        if (store_ok(s) && store_load_run(s, run, &r, false) == 1 && r.counts.pairs >= pairs)
            return true;
        cu_sleep_ms(50);
    }
    return false;
}

/* ---- the processes of a test ------------------------------------------------------ */

enum { CU_PROCS_MAX = 32 };
static pid_t cu_procs[CU_PROCS_MAX];

pid_t cu_track(pid_t pid)
{
    for (int i = 0; pid > 0 && i < CU_PROCS_MAX; i++)
        if (cu_procs[i] <= 0) {
            cu_procs[i] = pid;
            return pid;
        }
    if (pid > 0)
        cu_stop(pid, SIGKILL);
    return -1;
}

void cu_untrack(pid_t pid)
{
    for (int i = 0; i < CU_PROCS_MAX; i++)
        if (cu_procs[i] == pid)
            cu_procs[i] = 0;
}

void cu_kill9(pid_t pid)
{
    cu_stop(pid, SIGKILL);
    cu_untrack(pid);
}

void cu_stop_all(void)
{
    for (int i = 0; i < CU_PROCS_MAX; i++)
        if (cu_procs[i] > 0)
            cu_stop(cu_procs[i], SIGKILL);
    memset(cu_procs, 0, sizeof cu_procs);
}

/* ---- the audit of a run ----------------------------------------------------------- */

bool cu_audit(Store *s, int64_t run, int64_t pairs, char *why, size_t size)
{
    StoreRun r;
    StoreAudit a;
    if (store_load_run(s, run, &r, false) != 1 || store_audit_run(s, run, &a) != 1) {
        snprintf(why, size, "run %lld cannot be read", (long long)run);
        return false;
    }
    int64_t endings = 0;
    for (int i = 0; i < r.counts.nreasons; i++)
        endings += r.counts.reasons[i];
    const struct { bool ok; const char *what; int64_t got, want; } C[] = {
        { pairs < 0 || a.run_pairs == pairs, "run pairs", a.run_pairs, pairs },
        { a.run_games == 2 * a.run_pairs, "run games", a.run_games, 2 * a.run_pairs },
        { a.run_penta == a.run_pairs, "run pentanomial", a.run_penta, a.run_pairs },
        { a.task_pairs == a.run_pairs, "pairs over its tasks", a.task_pairs, a.run_pairs },
        { a.result_pairs == a.run_pairs, "pairs over its lease results", a.result_pairs, a.run_pairs },
        { a.task_games == a.run_games, "games over its tasks", a.task_games, a.run_games },
        { a.result_games == a.run_games, "games over its lease results", a.result_games, a.run_games },
        { endings == a.run_games, "game endings", endings, a.run_games },
        { pairs < 0 || a.tasks_done == a.tasks, "tasks done", a.tasks_done, a.tasks },
        /* every counted game kept once (docs/programs/xqf-tune.md), and its result the counted one */
        { a.stored_games == a.run_games, "games stored", a.stored_games, a.run_games },
        { a.stored_wins == a.run_wins, "wins of the stored games", a.stored_wins, a.run_wins },
        { a.stored_draws == a.run_draws, "draws of the stored games", a.stored_draws, a.run_draws },
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++)
        if (!C[i].ok) {
            snprintf(why, size, "%s: %lld, expected %lld", C[i].what, (long long)C[i].got, (long long)C[i].want);
            return false;
        }
    return true;
}

/* A uniform integer in [-r, r]. */
static int spread(Rng *rng, int r) { return (int)(rng_next(rng) % (uint64_t)(2 * r + 1)) - r; }

int cu_random_net(const char *path, uint64_t seed, char *why, size_t size)
{
    NnueNet *net = nnue_new();
    if (!net) {
        snprintf(why, size, "out of memory");
        return -1;
    }
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < NNUE_HIDDEN; i++)
        net->b1[i] = (int16_t)spread(&rng, 64);
    for (int f = 0; f < NNUE_FEATURES; f++)
        for (int i = 0; i < NNUE_HIDDEN; i++)
            net->w1[f][i] = (int16_t)spread(&rng, 48);
    for (int b = 0; b < NNUE_OUTPUT_BUCKETS; b++) {
        for (int i = 0; i < 2 * NNUE_HIDDEN; i++)
            net->w2[b][i] = (int16_t)spread(&rng, 127);
        net->b2[b] = spread(&rng, 2000);
    }
    int len = snprintf(net->description, sizeof net->description, "random weights, seed %llu (a test net)",
                       (unsigned long long)seed);
    net->description_length = (uint32_t)len;
    int rc = nnue_save(net, path, why, size);
    nnue_destroy(&net);
    return rc;
}

/* ---- a hand-made worker ------------------------------------------------------------ */

/* Sets CURVE on sock: the client's key pair file key, the server's public key file server_pub. 0 or -1 with why. */
static int client_curve(void *sock, const char *key, const char *server_pub, char *why, size_t size)
{
    KeyPair mine, server;
    if (keys_read(key, true, &mine, why, size) != 0 || keys_read(server_pub, false, &server, why, size) != 0)
        return -1;
    int rc = zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server.public_key, KEYS_Z85_LEN) == 0 &&
                     zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, mine.public_key, KEYS_Z85_LEN) == 0 &&
                     zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, mine.secret_key, KEYS_Z85_LEN) == 0
                 ? 0
                 : -1;
    keys_wipe(&mine);
    if (rc != 0)
        snprintf(why, size, "CURVE options: %s", zmq_strerror(zmq_errno()));
    return rc;
}

int cu_client_open(CuClient *c, const char *endpoint, const char *key, const char *server_pub, const char *netns,
                   char *why, size_t size)
{
    *c = (CuClient){ 0 };
    int home = -1, there = -1, rc = -1;
    if (netns) {
        char path[300];
        snprintf(path, sizeof path, "/run/netns/%s", netns);
        if ((home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0 ||
            (there = open(path, O_RDONLY | O_CLOEXEC)) < 0 || syscall(SYS_setns, there, CLONE_NEWNET) != 0) {
            snprintf(why, size, "cannot enter network namespace %s: %s", netns, strerror(errno));
            goto out;
        }
    }
    int linger = 0;
    /* the first socket starts ZeroMQ's threads, in this thread's namespace */
    if (!(c->ctx = zmq_ctx_new()) || !(c->sock = zmq_socket(c->ctx, ZMQ_DEALER)) ||
        zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger) != 0) {
        snprintf(why, size, "cannot make a DEALER: %s", zmq_strerror(zmq_errno()));
        goto out;
    }
    if (key && client_curve(c->sock, key, server_pub, why, size) != 0)
        goto out;
    if (zmq_connect(c->sock, endpoint) != 0) {
        snprintf(why, size, "cannot connect to %s: %s", endpoint, zmq_strerror(zmq_errno()));
        goto out;
    }
    rc = 0;
out:
    if (home >= 0 && syscall(SYS_setns, home, CLONE_NEWNET) != 0) {
        snprintf(why, size, "cannot come back to this process's network namespace: %s", strerror(errno));
        rc = -1;
    }
    if (home >= 0)
        close(home);
    if (there >= 0)
        close(there);
    if (rc != 0)
        cu_client_close(c);
    return rc;
}

void cu_client_close(CuClient *c)
{
    if (c->sock)
        zmq_close(c->sock);
    if (c->ctx)
        zmq_ctx_term(c->ctx);
    *c = (CuClient){ 0 };
}

int cu_client_send(CuClient *c, const XqfBuf *b) { return zmq_send(c->sock, b->data, b->len, 0) < 0 ? -1 : 0; }

int cu_client_send_msg(CuClient *c, const XqfMsg *m, XqfBuf *b)
{
    return xqf_msg_encode(m, b) == 0 ? cu_client_send(c, b) : -1;
}

int cu_client_next(CuClient *c, int ms, XqfMsg *m)
{
    zmq_pollitem_t it = { c->sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll(&it, 1, ms) <= 0)
        return 0;
    zmq_msg_t part;
    zmq_msg_init(&part);
    int rc = zmq_msg_recv(&part, c->sock, 0) >= 0 &&
                     xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), m, NULL, 0) == XQF_DECODE_OK
                 ? 1
                 : -1;
    zmq_msg_close(&part);
    return rc;
}

/* Sends m and reads the answer into *answer: 0, or -1 with why (nothing came, or not a message). */
static int ask(CuClient *c, const XqfMsg *m, XqfMsg *answer, char *why, size_t size)
{
    XqfBuf b = { 0 };
    int rc = cu_client_send_msg(c, m, &b);
    xqf_buf_free(&b);
    if (rc != 0) {
        snprintf(why, size, "cannot send a %s", xqf_msg_type_name(m->type));
        return -1;
    }
    if ((rc = cu_client_next(c, 10000, answer)) != 1) {
        snprintf(why, size, rc == 0 ? "no answer within 10 s" : "an answer that is no message");
        return -1;
    }
    return 0;
}

/* Says what answer was (its type, an error's text) in why. */
static void answered(const XqfMsg *answer, char *why, size_t size)
{
    snprintf(why, size, "answered %s%s%s", xqf_msg_type_name(answer->type), answer->type == XQF_MSG_ERROR ? ": " : "",
             answer->type == XQF_MSG_ERROR ? answer->u.error.text : "");
}

int cu_client_hello(CuClient *c, const char *name, char *why, size_t size)
{
    XqfMsg m, a;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
    m.u.hello.cores = 1;
    m.u.hello.concurrency = 1;
    if (ask(c, &m, &a, why, size) != 0)
        return -1;
    int rc = a.type == XQF_MSG_WELCOME ? 0 : -1;
    if (rc != 0)
        answered(&a, why, size);
    xqf_msg_free(&a);
    return rc;
}

int cu_client_task(CuClient *c, XqfMsg *task, char *why, size_t size)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
    if (ask(c, &m, task, why, size) != 0)
        return -1;
    if (task->type == XQF_MSG_TASK)
        return 0;
    answered(task, why, size);
    xqf_msg_free(task);
    return -1;
}

int cu_client_first_task(CuClient *c, int port, const char *name, double seconds, XqfMsg *task, char *why,
                         size_t size)
{
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    if (cu_client_open(c, ep, NULL, NULL, NULL, why, size) != 0)
        return -1;
    double until = cu_now() + seconds;
    int rc;
    while ((rc = cu_client_hello(c, name, why, size)) != 0 && cu_now() < until)
        cu_sleep_ms(200);
    return rc == 0 ? cu_client_task(c, task, why, size) : -1;
}

int cu_client_report(CuClient *c, const XqfBuf *b, char *status, size_t size, bool *stop)
{
    XqfMsg a;
    int rc;
    if (cu_client_send(c, b) != 0) {
        snprintf(status, size, "cannot send the result");
        return -1;
    }
    if ((rc = cu_client_next(c, 10000, &a)) != 1) {
        snprintf(status, size, rc == 0 ? "no answer within 10 s" : "an answer that is no message");
        return -1;
    }
    rc = a.type == XQF_MSG_ACK ? 0 : -1;
    if (rc == 0) {
        snprintf(status, size, "%s", a.u.ack.status);
        *stop = a.u.ack.stop;
    } else
        answered(&a, status, size);
    xqf_msg_free(&a);
    return rc;
}

/*
 * Appends a drawn record of game g of run pair `pair` over opening line
 * `line` (moves only), departing from it as f says.  0, or -1 with why.
 */
static int forge_record(const char *line, const char *other_line, int64_t pair, int g, CuForgery f, PackBuf *buf,
                        char *why, size_t size)
{
    Book *b = book_parse(f == CU_OTHER_POSITION ? other_line : line, "task", why, size);
    if (!b)
        return -1;
    const Opening *o = book_opening(b, 0);
    GameRecord rec;
    game_record_init(&rec);
    snprintf(rec.fen, sizeof rec.fen, "%s", o->fen);
    if (f == CU_OTHER_SIDE)
        snprintf(rec.fen, sizeof rec.fen, "%.*s %c - - 0 1", (int)strcspn(o->fen, " "), o->fen,
                 strstr(o->fen, " w ") ? 'b' : 'w');
    int rc = 0;
    for (int i = 0; rc == 0 && f != CU_NO_OPENING_MOVES && i < o->count; i++)
        rc = game_record_push(&rec, &(GameMove){ .move = o->moves[i], .book = true });
    for (int i = 0; rc == 0 && i < 6; i++)
        rc = game_record_push(&rec, &(GameMove){ .move = (Move)((pair * 131 + g * 17 + i * 7 + 1) & 0x3fff),
                                                 .book = f == CU_MORE_OPENING_MOVES && i == 0 });
    rec.result = RESULT_DRAW;
    rec.reason = GAME_REPETITION;
    if (rc == 0)
        rc = gamepack_append(&rec, XQF_GAME_MOVES, buf);
    if (rc != 0)
        snprintf(why, size, "cannot make a record");
    game_record_free(&rec);
    book_destroy(&b);
    return rc;
}

int cu_forged_result(const XqfMsg *task, const char *other_line, int from, int pairs, CuForgery f, bool swap,
                     XqfBuf *out, char *why, size_t size)
{
    const XqfMsg_task *t = &task->u.task;
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_RESULT);
    XqfMsg_result *r = &m.u.result;
    r->task_id = t->task_id;
    r->lease = t->lease;
    r->pairs = pairs;
    r->draws = 2 * pairs;
    r->penta.count = 5;
    r->penta.v[2] = pairs;
    r->reasons.count = GAME_REASONS;
    r->reasons.v[GAME_REPETITION] = 2 * pairs;
    if (f == CU_COUNTS_DISAGREE && pairs > 0) {
        r->wins = 1;                 /* a draw and a win: a pentanomial of 3 points */
        r->draws--;
        r->penta.v[2]--;
        r->penta.v[3]++;
    }
    r->games_from = from;
    PackBuf buf = { 0 };
    int rc = 0;
    for (int k = from; rc == 0 && f != CU_NO_RECORDS && k < pairs && k < (int)t->openings.count; k++) {
        bool last = k == pairs - 1;
        CuForgery how = last && f != CU_COUNTS_DISAGREE ? f : CU_HONEST;
        for (int g = 0; rc == 0 && g < 2; g++)
            rc = forge_record(t->openings.v[k], other_line, (int64_t)t->first_pair + k, last && swap ? 1 - g : g, how,
                              &buf, why, size);
    }
    r->games.data = buf.data;
    r->games.len = (uint32_t)buf.len;
    if (rc == 0 && (rc = xqf_msg_encode(&m, out)) != 0)
        snprintf(why, size, "cannot encode the result");
    xqf_msg_free(&m);
    return rc;
}

int cu_log_lines(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* ---- the games really played: xqf-match over the same openings ---------------------- */

/* Parses "Endings: checkmate 1, adjudication (score) 59" into reasons by GameReason. */
static void parse_endings(const char *line, int64_t *reasons)
{
    for (int r = 0; r < GAME_REASONS; r++) {
        const char *text = game_reason_text((GameReason)r);
        size_t len = strlen(text);
        for (const char *p = strstr(line, text); p; p = strstr(p + 1, text))
            if ((p[-1] == ' ' && (p[-2] == ':' || p[-2] == ',')) && p[len] == ' ') {
                reasons[r] = strtoll(p + len + 1, NULL, 10);
                break;
            }
    }
}

/* "Name=v,Name=v" as xqf-match player words: " option.Name=v option.Name=v". */
static void option_words(const char *params, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    char copy[STORE_PARAMS_MAX + 1];
    snprintf(copy, sizeof copy, "%s", params);
    for (char *save, *w = strtok_r(copy, ",", &save); w && len < size; w = strtok_r(NULL, ",", &save))
        len += (size_t)snprintf(out + len, size - len, " option.%s", w);
}

int cu_match_pairs(const char *const *openings, int n, const char *params0, const char *params1, int nodes,
                   int threads, const char *pgn, StoreCounts *out)
{
    char book[300];
    snprintf(book, sizeof book, "%s/book-XXXXXX", cu_fx.dir);
    int fd = mkstemp(book);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return -1;
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\n", openings[i]);
    fclose(f);
    char w0[STORE_PARAMS_MAX * 2], w1[STORE_PARAMS_MAX * 2], cmd[STORE_PARAMS_MAX * 5];
    option_words(params0, w0, sizeof w0);
    option_words(params1, w1, sizeof w1);
    snprintf(cmd, sizeof cmd,
             "'%s/xqf-match' --engine name=test%s --engine name=base%s --nodes %d --pairs %d --book '%s' "
             "--concurrency %d --quiet%s%s%s 2>>'%s'", XQF_BIN, w0, w1, nodes, n, book, threads, pgn ? " --pgn '" : "",
             pgn ? pgn : "", pgn ? "'" : "", cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    if (!p) {
        unlink(book);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->nreasons = GAME_REASONS;
    char line[4096];
    int seen = 0;
    while (fgets(line, sizeof line, p)) {
        int64_t *v = out->penta;
        if (sscanf(line, "Pairs: %" SCNd64, &out->pairs) == 1)
            seen |= 1;
        else if (sscanf(line, "W/D/L: %" SCNd64 "/%" SCNd64 "/%" SCNd64, &out->wins, &out->draws,
                        &out->losses) == 3)
            seen |= 2;
        else if (sscanf(line, "Pentanomial [LL, LD, DD+WL, WD, WW]: %" SCNd64 ", %" SCNd64 ", %" SCNd64
                              ", %" SCNd64 ", %" SCNd64, &v[0], &v[1], &v[2], &v[3], &v[4]) == 5)
            seen |= 4;
        else if (strncmp(line, "Endings:", 8) == 0) {
            parse_endings(line, out->reasons);
            seen |= 8;
        }
    }
    int st = pclose(p);
    unlink(book);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && seen == 15 && out->pairs == n)
        return 0;
    fprintf(stderr, "xqf-match failed (status %d, output %d; log: %s)\n", st, seen, cu_fx.logfile);
    return -1;
}

/* ---- HTTP: the monitoring's page ------------------------------------------------- */

int cu_http(int port, const char *method, const char *path, char *out, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { 10, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    out[0] = '\0';
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[256];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\n", method, path,
                     strcmp(method, "POST") == 0 ? "Content-Length: 0\r\n" : "");
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    size_t len = 0;
    ssize_t got;
    while (len + 1 < size && (got = read(fd, out + len, size - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(fd);
    int status = -1;
    return sscanf(out, "HTTP/1.%*d %d", &status) == 1 ? status : -1;
}

double cu_sample(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, name, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}
