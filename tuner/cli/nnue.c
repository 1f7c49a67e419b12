/*
 * nnue.c - xqf-tune nnue train: the network of docs/nnue.md trained on
 * data files (XQFDATA1) by tuner/nnue/train.py, PyTorch in Debian's
 * /usr/bin/python3.
 *
 * This front end checks what it can before the (slow to start) trainer
 * runs: the options against their bounds, every data file's header and
 * size, the output's folder, the engine, the checkpoint to resume, the
 * parent net to start from.
 * Then it replaces itself with the trainer (execv), passing every option
 * with its value, so that the defaults are this table's.  The trainer is
 * found in XQF_NNUE_DIR (CMake: the source tree this xqf-tune was built
 * from, or /usr/share/xqf/nnue in the package), or at $XQF_NNUE_TRAINER.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "nnue.h"

#define NNUE_PYTHON "/usr/bin/python3"
#define NNUE_TRAINER XQF_NNUE_TRAINER_PATH     /* CMake: XQF_NNUE_DIR (the source tree, or the package's) */

enum { DATA_HEADER = 8, DATA_RECORD = 54 };   /* worker/game/datagen.h's XQFDATA1 */

static const OptSpec NNUE_OPTIONS[] = {
    { "--out", OPT_TEXT, "NET", NULL, .help = "the net file, or a folder for xqf-<sha256 12 hex>.nnue (required)" },
    { "--epochs", OPT_INT, "N", "10", .imin = 1, .imax = 100000, .help = "passes over the training positions" },
    { "--batch", OPT_INT, "N", "16384", .imin = 1, .imax = 1 << 20, .help = "positions per Adam step" },
    { "--lambda", OPT_REAL, "X", "0.75", .rmin = 0, .rmax = 1,
      .help = "weight of the search score against the game result in the target" },
    { "--scale", OPT_REAL, "K", "400", .rmin = 1, .rmax = 10000, .help = "K of sigmoid(cp / K) in the loss" },
    { "--lr", OPT_REAL, "X", "0.001", .rmin = 1e-7, .rmax = 1, .help = "Adam's first learning rate (cosine to 1 %)" },
    { "--seed", OPT_INT, "S", "1", .imin = 0, .imax = INT32_MAX, .help = "seed of the initial net and the shuffles" },
    { "--threads", OPT_INT, "N", NULL, .imin = 1, .imax = 256, .help = "PyTorch threads (default: online cores)" },
    { "--device", OPT_TEXT, "auto|cpu|cuda", "auto",
      .help = "where to train: a GPU when PyTorch sees one (auto), the CPU, or the GPU (cuda: fails without one)" },
    { "--val-share", OPT_REAL, "X", "0.02", .rmin = 0, .rmax = 0.5,
      .help = "share of positions held out for validation (by a hash of the position)" },
    { "--buffer", OPT_INT, "N", "2000000", .imin = 2, .imax = INT64_C(1) << 31,
      .help = "shuffle buffer in positions (54 bytes each)" },
    { "--checkpoints", OPT_TEXT, "DIR", NULL, .help = "a checkpoint per epoch (default: NET.ckpt or NET/checkpoints)" },
    { "--resume", OPT_TEXT, "DIR", NULL, .help = "continue from DIR's last checkpoint" },
    { "--init", OPT_TEXT, "NET", NULL,
      .help = "start from a net file's weights (a parent net) instead of random ones; not with --resume" },
    { "--html", OPT_TEXT, "FILE", NULL, .help = "write the training's page (loss per epoch, quantisation)" },
    { "--engine", OPT_TEXT, "PATH", NULL, .help = "check PATH evalnet NET against the trainer on held-out positions" },
    OPTS_END,
};

static const OptTable NNUE_TABLE = {
    .program = "xqf-tune", .spec = NNUE_OPTIONS, .max_positional = CLI_DATA_FILES_MAX,
    .usage = "Usage: xqf-tune nnue train DATA... --out NET [--epochs N] [--batch N] [--lambda X] [--scale K]\n"
             "                           [--lr X] [--seed S] [--threads N] [--device auto|cpu|cuda]\n"
             "                           [--val-share X] [--buffer N]\n"
             "                           [--checkpoints DIR] [--resume DIR | --init NET] [--html FILE]\n"
             "                           [--engine PATH]\n"
             "\n"
             "Trains the network of docs/nnue.md on data files (XQFDATA1: xqf-tune data export,\n"
             "xqf-match --data; a folder stands for its *.data files) and writes the engine's\n"
             "net file, then checks the integer net against the trainer's on held-out positions\n"
             "(with --engine, PATH evalnet NET too: exit 1 beyond 3 cp + 2 %).  Runs\n"
             NNUE_TRAINER " (or $XQF_NNUE_TRAINER)\n"
             "with " NNUE_PYTHON " (or $XQF_NNUE_PYTHON: a Python whose PyTorch has CUDA, for\n"
             "--device cuda) and PyTorch (Debian's python3-torch).\n",
};

/* A data file: XQFDATA1's header and whole records; *positions its records. Exit status. */
static int check_data_file(const char *what, const char *path, const struct stat *st, int64_t *positions)
{
    FILE *f = fopen(path, "rb");
    char head[DATA_HEADER];
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (!f)
        return cli_fail(CLI_USAGE, "%s: cannot read '%s': %s", what, path, strerror(errno));
    fclose(f);
    if (got != sizeof head || memcmp(head, "XQFDATA1", DATA_HEADER) != 0)
        return cli_fail(CLI_USAGE, "%s: '%s' is not a training data file (no XQFDATA1 header)", what, path);
    if ((st->st_size - DATA_HEADER) % DATA_RECORD != 0)
        return cli_fail(CLI_USAGE, "%s: '%s' is truncated (%jd bytes after the header: not whole %d-byte records)",
                        what, path, (intmax_t)(st->st_size - DATA_HEADER), DATA_RECORD);
    *positions += (st->st_size - DATA_HEADER) / DATA_RECORD;
    return CLI_OK;
}

int cli_data_input_check(const char *what, const char *path, int64_t *positions)
{
    struct stat st;
    *positions = 0;
    if (stat(path, &st) != 0)
        return cli_fail(CLI_USAGE, "%s: cannot read '%s': %s", what, path, strerror(errno));
    if (S_ISREG(st.st_mode))
        return check_data_file(what, path, &st, positions);
    if (!S_ISDIR(st.st_mode))
        return cli_fail(CLI_USAGE, "%s: '%s' is neither a file nor a folder", what, path);
    /* a folder: the trainer reads its *.data files (train.py), each checked as a file given alone */
    DIR *d = opendir(path);
    if (!d)
        return cli_fail(CLI_USAGE, "%s: cannot read the folder '%s': %s", what, path, strerror(errno));
    int status = CLI_OK, files = 0;
    struct dirent *e;
    while (status == CLI_OK && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char file[CLI_PATH_MAX];
        if (len < 5 || strcmp(e->d_name + len - 5, ".data") != 0)
            continue;
        if (snprintf(file, sizeof file, "%s/%s", path, e->d_name) >= (int)sizeof file)
            status = cli_fail(CLI_USAGE, "%s: '%s/%s' is too long a path", what, path, e->d_name);
        else if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
            status = cli_fail(CLI_USAGE, "%s: cannot read '%s'", what, file);
        else
            status = check_data_file(what, file, &st, positions), files++;
    }
    closedir(d);
    if (status == CLI_OK && files == 0)
        status = cli_fail(CLI_USAGE, "%s: the folder '%s' holds no *.data file", what, path);
    return status;
}

/* Whether the folder a file path would be written in exists (the current folder for a bare name). */
static bool parent_exists(const char *path)
{
    char dir[CLI_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return true;
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The checks of train's options beyond their bounds. Exit status. */
static int check_train(const Opts *o)
{
    if (o->npositional < 1)
        return cli_fail(CLI_USAGE, "nnue train: give one or more DATA files (see xqf-tune nnue --help)");
    for (int i = 0; i < o->npositional; i++) {
        int64_t positions;
        int status = cli_data_input_check("DATA", o->positional[i], &positions);
        if (status != CLI_OK)
            return status;
    }
    const char *out = opts_text(o, "--out"), *engine = opts_text(o, "--engine");
    const char *resume = opts_text(o, "--resume"), *html = opts_text(o, "--html");
    struct stat st;
    if (!out || !*out)
        return cli_fail(CLI_USAGE, "nnue train: --out NET is required");
    if (!(stat(out, &st) == 0 && S_ISDIR(st.st_mode)) && !parent_exists(out))
        return cli_fail(CLI_USAGE, "--out: the folder of '%s' does not exist", out);
    if (html && !parent_exists(html))
        return cli_fail(CLI_USAGE, "--html: the folder of '%s' does not exist", html);
    const char *device = opts_text(o, "--device");
    if (device && strcmp(device, "auto") != 0 && strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0)
        return cli_fail(CLI_USAGE, "--device: '%s' is not auto, cpu or cuda", device);
    if (engine && access(engine, X_OK) != 0)
        return cli_fail(CLI_USAGE, "--engine: '%s' is not an executable program", engine);
    const char *init = opts_text(o, "--init");
    if (init && resume)
        return cli_fail(CLI_USAGE, "--init and --resume: one or the other (a checkpoint has its own weights)");
    if (init) {
        /* The engine's own reader: a parent the engine would refuse is refused before PyTorch starts. */
        char err[256];
        NnueNet *parent = nnue_load_file(init, err, sizeof err);
        if (!parent)
            return cli_fail(CLI_USAGE, "--init: %s", err);
        nnue_destroy(&parent);
    }
    if (resume) {
        char last[CLI_PATH_MAX];
        snprintf(last, sizeof last, "%s/last.pt", resume);
        if (access(last, R_OK) != 0)
            return cli_fail(CLI_USAGE, "--resume: no checkpoint in '%s' (last.pt)", resume);
    }
    return CLI_OK;
}

/* Replaces this process with the trainer; returns only when that fails. Exit status. */
static int run_trainer(const Opts *o)
{
    const char *trainer = getenv("XQF_NNUE_TRAINER");
    if (!trainer || !*trainer)
        trainer = NNUE_TRAINER;
    /* Debian's python3-torch has no CUDA: a GPU takes another interpreter (a virtual environment with
     * PyTorch built for CUDA), named by the operator as the trainer is. */
    const char *python = getenv("XQF_NNUE_PYTHON");
    if (!python || !*python)
        python = NNUE_PYTHON;
    if (access(python, X_OK) != 0)
        return cli_fail(CLI_FAIL, "%s is missing: install python3 and python3-torch (ops/setup), or set "
                                  "XQF_NNUE_PYTHON to a Python with PyTorch", python);
    if (access(trainer, R_OK) != 0)
        return cli_fail(CLI_FAIL, "the trainer '%s' is missing: set XQF_NNUE_TRAINER to tuner/nnue/train.py",
                        trainer);
    char threads[24];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(threads, sizeof threads, "%" PRId64,
             opts_given(o, "--threads") ? opts_int(o, "--threads") : (int64_t)(cores > 0 ? cores : 1));
    char *args[2 + CLI_DATA_FILES_MAX + 2 * OPTS_MAX + 1];
    int n = 0;
    args[n++] = (char *)python;
    args[n++] = (char *)trainer;
    for (int i = 0; i < o->npositional; i++)
        args[n++] = (char *)o->positional[i];
    for (const OptSpec *spec = NNUE_OPTIONS; spec->name; spec++) {
        const char *value = strcmp(spec->name, "--threads") == 0 ? threads : opts_text(o, spec->name);
        if (value) {
            args[n++] = (char *)spec->name;
            args[n++] = (char *)value;
        }
    }
    args[n] = NULL;
    fflush(stdout);
    execv(python, args);
    return cli_fail(CLI_FAIL, "cannot run %s: %s", python, strerror(errno));
}

int tune_cmd_nnue(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    Opts o;
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
        return cli_parse(&o, &NNUE_TABLE, argc - 1, argv + 1);
    if (strcmp(sub, "train") != 0)
        return cli_fail(CLI_USAGE, "nnue: say train (see xqf-tune nnue --help)");
    int status = cli_parse(&o, &NNUE_TABLE, argc - 2, argv + 2);
    if (status != CLI_GO || (status = check_train(&o)) != CLI_OK)
        return status;
    return run_trainer(&o);
}
