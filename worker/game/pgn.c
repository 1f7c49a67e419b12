#include "pgn.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fen.h"
#include "search.h"

enum { LINE_WIDTH = 79 };

/* Writes movetext tokens, wrapping lines at LINE_WIDTH. */
typedef struct {
    FILE *out;
    int column;
} Wrapper;

static void put_token(Wrapper *w, const char *token)
{
    int len = (int)strlen(token);
    if (w->column > 0 && w->column + 1 + len > LINE_WIDTH) {
        fputc('\n', w->out);
        w->column = 0;
    }
    if (w->column > 0) {
        fputc(' ', w->out);
        w->column++;
    }
    fputs(token, w->out);
    w->column += len;
}

static void score_comment(const GameMove *m, char *out, size_t len)
{
    char score[24] = "";
    if (!m->has_score)
        snprintf(score, sizeof score, "?");
    else if (m->score >= MATE_BOUND)
        snprintf(score, sizeof score, "+M%d", (MATE - m->score + 1) / 2);
    else if (m->score <= -MATE_BOUND)
        snprintf(score, sizeof score, "-M%d", (MATE + m->score) / 2);
    else
        snprintf(score, sizeof score, "%+.2f", m->score / 100.0);
    snprintf(out, len, "{%s/%d %.3fs}", score, m->depth, m->time_us / 1e6);
}

static const char *termination(GameReason r)
{
    switch (r) {
    case GAME_ADJUDICATED_WIN:
    case GAME_ADJUDICATED_DRAW:
    case GAME_MAX_LENGTH:
        return "adjudication";
    case GAME_TIME_FORFEIT:
        return "time forfeit";
    case GAME_ILLEGAL_MOVE:
    case GAME_BAD_OUTPUT:
        return "rules infraction";
    case GAME_CRASH:
    case GAME_NO_RESPONSE:
    case GAME_START_FAILURE:
    case GAME_ABANDONED:
        return "abandoned";
    default:
        return "normal";
    }
}

/*
 * A move's comment: "book", or "S/D Ts" with S a score in pawns ("+0.35"),
 * a mate ("+M3", "-M2") or "?".  Returns 0 with the fields set in *m, or -1
 * when the comment is something else (the game's last comment).
 */
int pgn_parse_move_comment(const char *c, GameMove *m)
{
    if (strcmp(c, "book") == 0) {
        m->book = true;
        return 0;
    }
    int score = 0, used = 0, depth;
    double seconds;
    bool has_score = true;
    if (c[0] == '?') {
        has_score = false;
        used = 1;
    } else if ((c[0] == '+' || c[0] == '-') && c[1] == 'M') {
        int n;
        if (sscanf(c + 2, "%d%n", &n, &used) != 1 || n < 1 || n > MAX_PLY)
            return -1;
        used += 2;
        score = c[0] == '+' ? MATE - (2 * n - 1) : -(MATE - 2 * n);
    } else {
        double pawns;
        if ((c[0] != '+' && c[0] != '-') || sscanf(c, "%lf%n", &pawns, &used) != 1 || !(fabs(pawns) < MATE_BOUND / 100.0))
            return -1;
        score = (int)lround(pawns * 100);
        if (abs(score) >= MATE_BOUND) /* 298.715 rounds into the mate scores */
            return -1;
    }
    int tail = 0;
    if (sscanf(c + used, "/%d %lfs%n", &depth, &seconds, &tail) != 2 || c[used + tail] || depth < 0
        || !(seconds >= 0 && seconds < 1e9))
        return -1;
    m->has_score = has_score;
    m->score = score;
    m->depth = depth;
    m->time_us = (int64_t)llround(seconds * 1e6);
    return 0;
}

/* A tag value with '"' and '\' escaped. */
static void put_tag(FILE *out, const char *name, const char *value)
{
    fprintf(out, "[%s \"", name);
    for (const char *c = value; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', out);
        fputc(*c, out);
    }
    fputs("\"]\n", out);
}

int pgn_write(FILE *out, const GameRecord *g, const PgnTags *t)
{
    Board b;
    char err[128], text[64];
    if (fen_parse(&b, g->fen, FEN_GAME, err, sizeof err) != 0)
        return -1;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    const char *result = rules_result_text(g->result);
    put_tag(out, "Event", t->event);
    put_tag(out, "Site", "?");
    strftime(text, sizeof text, "%Y.%m.%d", &tm);
    put_tag(out, "Date", text);
    snprintf(text, sizeof text, "%d", t->round);
    put_tag(out, "Round", text);
    put_tag(out, "White", t->red);
    put_tag(out, "Black", t->black);
    put_tag(out, "Result", result);
    put_tag(out, "Variant", "xiangqi");
    put_tag(out, "SetUp", "1");
    put_tag(out, "FEN", g->fen);
    put_tag(out, "TimeControl", t->time_control ? t->time_control : "-");
    if (!t->time_control) {
        snprintf(text, sizeof text, "%" PRIu64, t->nodes);
        put_tag(out, "NodesPerMove", text);
    }
    if (t->threads > 0) {
        snprintf(text, sizeof text, "%d", t->threads);
        put_tag(out, "Threads", text);
    }
    if (t->red_net)
        put_tag(out, "RedNet", t->red_net);
    if (t->black_net)
        put_tag(out, "BlackNet", t->black_net);
    if (t->book)
        put_tag(out, "Book", t->book);
    put_tag(out, "Termination", termination(g->reason));
    snprintf(text, sizeof text, "%d", g->count);
    put_tag(out, "PlyCount", text);
    fputc('\n', out);

    Wrapper w = { out, 0 };
    int fullmove = b.fullmove, side = b.side;
    bool commented = false; /* the last move was written with a comment */
    for (int i = 0; i < g->count; i++) {
        const GameMove *m = &g->moves[i];
        if (side == RED || i == 0) {
            snprintf(text, sizeof text, side == RED ? "%d." : "%d...", fullmove);
            put_token(&w, text);
        }
        move_text(m->move, text);
        put_token(&w, text);
        /* a stored game's move keeps its score and depth only when its run asked: else no comment */
        commented = m->book || m->has_score || m->time_us > 0;
        if (m->book)
            put_token(&w, "{book}");
        else if (commented) {
            score_comment(m, text, sizeof text);
            put_token(&w, text);
        }
        if (side == BLACK)
            fullmove++;
        side ^= 1;
    }
    if (g->detail[0]) {
        char detail[sizeof g->detail];
        snprintf(detail, sizeof detail, "%s", g->detail);
        for (char *c = detail; *c; c++)
            if (*c == '}')
                *c = ')';
        /* A last move written without a comment would take a detail that reads as
         * a move's comment ("book", "+1.00/3 0.1s") for its own: give it the
         * empty one, which reads back as no score, no depth, no time. */
        GameMove as_move = { 0 };
        if (g->count > 0 && !commented && pgn_parse_move_comment(detail, &as_move) == 0)
            put_token(&w, "{?/0 0.000s}");
        char comment[sizeof detail + 2];
        snprintf(comment, sizeof comment, "{%s}", detail);
        /* A comment may be longer than a line: write it whole. */
        put_token(&w, comment);
    }
    put_token(&w, result);
    fputs("\n\n", out);
    return ferror(out) ? -1 : 0;
}

/* ---- reading PGN -------------------------------------------------------- */

/* Reads a tag line `[Name "value"]` into name and value (escapes undone). Returns 0 or -1. */
static int parse_tag(const char *line, char *name, size_t nlen, char *value, size_t vlen)
{
    if (*line++ != '[')
        return -1;
    size_t n = 0;
    while (isalnum((unsigned char)*line) || *line == '_')
        if (n + 1 < nlen)
            name[n++] = *line++;
        else
            return -1;
    name[n] = '\0';
    if (n == 0 || *line++ != ' ' || *line++ != '"')
        return -1;
    size_t v = 0;
    for (; *line && *line != '"'; line++) {
        if (*line == '\\' && (line[1] == '"' || line[1] == '\\'))
            line++;
        if (v + 1 >= vlen)
            return -1;
        value[v++] = *line;
    }
    value[v] = '\0';
    char end = line[0] == '"' && line[1] == ']' ? line[2 + strspn(line + 2, " \t\r")] : 'x';
    return end == '\n' || end == '\0' ? 0 : -1; /* the file's last line may lack its newline */
}

static GameResult result_of(const char *token)
{
    for (GameResult r = RESULT_RED_WINS; r <= RESULT_DRAW; r++)
        if (strcmp(token, rules_result_text(r)) == 0)
            return r;
    return strcmp(token, "*") == 0 ? RESULT_NONE : (GameResult)-1;
}

/* The movetext into g's moves, replayed on b. Returns 0, or -1 with a message. */
static int parse_movetext(char *text, PgnGame *g, Board *b, char *err, size_t errlen)
{
    GameMove *last = NULL;
    char *p = text;
    for (;;) {
        p += strspn(p, " \t\r\n");
        if (!*p) {
            snprintf(err, errlen, "the moves end without a result");
            return -1;
        }
        if (*p == '{') {
            char *end = strchr(p, '}');
            if (!end) {
                snprintf(err, errlen, "a comment without its '}'");
                return -1;
            }
            *end = '\0';
            GameMove parsed = { 0 };
            if (last && pgn_parse_move_comment(p + 1, &parsed) == 0) {
                parsed.move = last->move;
                *last = parsed;
            } else {
                snprintf(g->rec.detail, sizeof g->rec.detail, "%s", p + 1);
            }
            last = NULL;
            p = end + 1;
            continue;
        }
        size_t len = strcspn(p, " \t\r\n{");
        char token[32];
        if (len >= sizeof token) {
            snprintf(err, errlen, "'%.20s...' is not a move", p);
            return -1;
        }
        memcpy(token, p, len);
        token[len] = '\0';
        p += len;
        GameResult r = result_of(token);
        if ((int)r >= 0) {
            g->rec.result = r;
            return 0;
        }
        if (isdigit((unsigned char)token[0]) && token[len - 1] == '.') {
            last = NULL;
            continue;
        }
        Move m;
        char msg[96];
        if (move_parse(b, token, &m, msg, sizeof msg) != 0) {
            snprintf(err, errlen, "move %d '%s': %s", g->rec.count + 1, token, msg);
            return -1;
        }
        GameMove gm = { .move = m };
        if (game_record_push(&g->rec, &gm) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        board_make(b, m);
        last = &g->rec.moves[g->rec.count - 1];
    }
}

int pgn_read(FILE *f, PgnGame *g, int *line, char *err, size_t errlen)
{
    pgn_game_free(g);
    memset(g, 0, sizeof *g);
    snprintf(g->rec.fen, sizeof g->rec.fen, "%s", START_FEN);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    char *moves = NULL;
    size_t moves_len = 0;
    FILE *movetext = open_memstream(&moves, &moves_len);
    if (!movetext) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    bool in_tags = false, in_moves = false;
    int rc = 0, first_line = 0;
    char name[32], value[256];
    char msg[200] = "";
    while ((n = getline(&buf, &cap, f)) > 0) {
        ++*line;
        bool blank = strspn(buf, " \t\r\n") == (size_t)n;
        if (!in_tags && !in_moves) {
            if (blank)
                continue;
            in_tags = true;
            first_line = *line;
        }
        if (in_tags && buf[0] == '[') {
            if (parse_tag(buf, name, sizeof name, value, sizeof value) != 0) {
                snprintf(msg, sizeof msg, "line %d: not a tag [Name \"value\"]", *line);
                rc = -1;
                break;
            }
            bool fen = strcmp(name, "FEN") == 0, red = strcmp(name, "White") == 0;
            if ((fen || red || strcmp(name, "Black") == 0) && strlen(value) >= (fen ? sizeof g->rec.fen : sizeof g->red)) {
                snprintf(msg, sizeof msg, "line %d: the %s tag is too long", *line, name);
                rc = -1;
                break;
            }
            if (fen || red || strcmp(name, "Black") == 0)
                memcpy(fen ? g->rec.fen : red ? g->red : g->black, value, strlen(value) + 1);
            else if (strcmp(name, "Round") == 0)
                g->round = atoi(value);
            continue;
        }
        if (blank && in_moves)
            break;
        if (blank)
            continue;
        in_tags = false;
        in_moves = true;
        fwrite(buf, 1, (size_t)n, movetext);
    }
    free(buf);
    if (fclose(movetext) != 0 && rc == 0) {
        snprintf(msg, sizeof msg, "line %d: out of memory", *line);
        rc = -1;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(msg, sizeof msg, "line %d: read error: %s", *line, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && !in_tags && !in_moves) {
        free(moves);
        return 0;
    }
    if (rc == 0 && !in_moves) {
        snprintf(msg, sizeof msg, "line %d: a game without moves or result", first_line);
        rc = -1;
    }
    Board b;
    char why[160];
    if (rc == 0 && fen_parse(&b, g->rec.fen, FEN_GAME, why, sizeof why) != 0) {
        snprintf(msg, sizeof msg, "game at line %d: bad FEN tag: %s", first_line, why);
        rc = -1;
    }
    if (rc == 0 && parse_movetext(moves, g, &b, why, sizeof why) != 0) {
        snprintf(msg, sizeof msg, "game at line %d: %s", first_line, why);
        rc = -1;
    }
    free(moves);
    if (rc != 0) {
        snprintf(err, errlen, "%s", msg);
        pgn_game_free(g);
        return -1;
    }
    return 1;
}

void pgn_game_free(PgnGame *g)
{
    game_record_free(&g->rec);
}
