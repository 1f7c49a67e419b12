#include "tables.h"

#include <pthread.h>
#include <stdlib.h>

LeaperTargets tab_king[SQUARES];
LeaperTargets tab_advisor[SQUARES];
LeaperTargets tab_elephant[SQUARES];
LeaperTargets tab_horse[SQUARES];
LeaperTargets tab_horse_attackers[SQUARES];
LeaperTargets tab_pawn[2][SQUARES];
SquareBits tab_king_set[SQUARES];
SquareBits tab_advisor_set[SQUARES];
SquareBits tab_pawn_set[2][SQUARES];
SquareBits tab_palace_set[2];
LineMasks tab_rank[FILES][1 << FILES];
LineMasks tab_file[RANKS][1 << RANKS];
uint8_t tab_popcount[1 << RANKS];
uint64_t zobrist_piece[16][SQUARES];
uint64_t zobrist_side;
uint8_t tab_in_palace[2][SQUARES];
uint8_t tab_elephant_point[2][SQUARES];

static bool on_board(int file, int rank)
{
    return file >= 0 && file < FILES && rank >= 0 && rank < RANKS;
}

static bool palace(int color, int file, int rank)
{
    if (file < 3 || file > 5)
        return false;
    return color == RED ? rank >= 0 && rank <= 2 : rank >= 7 && rank <= 9;
}

static void add_target(LeaperTargets *t, int to, int block)
{
    t->to[t->count] = (uint8_t)to;
    t->block[t->count] = (uint8_t)block;
    t->count++;
}

static SquareBits target_set(const LeaperTargets *t)
{
    SquareBits set = 0;
    for (int j = 0; j < t->count; j++)
        set |= (SquareBits)1 << t->to[j];
    return set;
}

static void init_leapers(void)
{
    static const int orth[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };
    static const int diag[4][2] = { { 1, 1 }, { 1, -1 }, { -1, 1 }, { -1, -1 } };
    static const int horse[8][2] = { { 1, 2 }, { -1, 2 }, { 1, -2 }, { -1, -2 },
                                     { 2, 1 }, { 2, -1 }, { -2, 1 }, { -2, -1 } };

    for (int sq = 0; sq < SQUARES; sq++) {
        int f = sq_file(sq), r = sq_rank(sq);
        for (int c = RED; c <= BLACK; c++) {
            tab_in_palace[c][sq] = palace(c, f, r);
            if (palace(c, f, r)) {
                for (int d = 0; d < 4; d++) {
                    int kf = f + orth[d][0], kr = r + orth[d][1];
                    if (palace(c, kf, kr))
                        add_target(&tab_king[sq], sq_make(kf, kr), 0);
                    int af = f + diag[d][0], ar = r + diag[d][1];
                    if (palace(c, af, ar) && (f + r) % 2 == (c == RED ? 1 : 0))
                        add_target(&tab_advisor[sq], sq_make(af, ar), 0);
                }
            }
            /* Pawns: forward one; sideways once across the river. */
            int fwd = c == RED ? 1 : -1;
            bool crossed = c == RED ? r >= 5 : r <= 4;
            if (on_board(f, r + fwd))
                add_target(&tab_pawn[c][sq], sq_make(f, r + fwd), 0);
            if (crossed) {
                if (f > 0)
                    add_target(&tab_pawn[c][sq], sq - 1, 0);
                if (f < FILES - 1)
                    add_target(&tab_pawn[c][sq], sq + 1, 0);
            }
        }
        /* Elephants stay on their own side of the river. */
        bool red_half = r <= 4;
        for (int d = 0; d < 4; d++) {
            int ef = f + 2 * diag[d][0], er = r + 2 * diag[d][1];
            if (on_board(ef, er) && (er <= 4) == red_half)
                add_target(&tab_elephant[sq], sq_make(ef, er), sq_make(f + diag[d][0], r + diag[d][1]));
        }
        for (int d = 0; d < 8; d++) {
            int df = horse[d][0], dr = horse[d][1];
            int leg_f = abs(df) == 2 ? df / 2 : 0, leg_r = abs(dr) == 2 ? dr / 2 : 0;
            if (on_board(f + df, r + dr))
                add_target(&tab_horse[sq], sq_make(f + df, r + dr), sq_make(f + leg_f, r + leg_r));
            /* A horse at sq - d reaches sq through its own leg. */
            int hf = f - df, hr = r - dr;
            if (on_board(hf, hr))
                add_target(&tab_horse_attackers[sq], sq_make(hf, hr), sq_make(hf + leg_f, hr + leg_r));
        }
    }
    for (int sq = 0; sq < SQUARES; sq++) {
        tab_king_set[sq] = target_set(&tab_king[sq]);
        tab_advisor_set[sq] = target_set(&tab_advisor[sq]);
        for (int c = RED; c <= BLACK; c++) {
            tab_pawn_set[c][sq] = target_set(&tab_pawn[c][sq]);
            if (tab_in_palace[c][sq])
                tab_palace_set[c] |= (SquareBits)1 << sq;
        }
    }
    static const int red_points[7] = { 2, 6, 18, 22, 26, 38, 42 }; /* c0 g0 a2 e2 i2 c4 g4 */
    for (int i = 0; i < 7; i++) {
        int sq = red_points[i];
        tab_elephant_point[RED][sq] = 1;
        tab_elephant_point[BLACK][sq_make(sq_file(sq), RANKS - 1 - sq_rank(sq))] = 1;
    }
}

/* Masks along one line of `len` squares for a slider at `pos`. */
static LineMasks line_masks(int pos, unsigned occ, int len)
{
    LineMasks m = { 0, 0, 0 };
    for (int dir = -1; dir <= 1; dir += 2) {
        int seen = 0;
        for (int p = pos + dir; p >= 0 && p < len; p += dir) {
            if (!(occ & (1u << p))) {
                if (seen == 0)
                    m.slide |= (uint16_t)(1u << p);
                continue;
            }
            seen++;
            if (seen == 1) {
                m.first |= (uint16_t)(1u << p);
            } else {
                m.second |= (uint16_t)(1u << p);
                break;
            }
        }
    }
    return m;
}

static void init_lines(void)
{
    for (unsigned i = 1; i < (1u << RANKS); i++)
        tab_popcount[i] = (uint8_t)(tab_popcount[i >> 1] + (i & 1));
    for (int p = 0; p < FILES; p++)
        for (unsigned o = 0; o < (1u << FILES); o++)
            tab_rank[p][o] = line_masks(p, o, FILES);
    for (int p = 0; p < RANKS; p++)
        for (unsigned o = 0; o < (1u << RANKS); o++)
            tab_file[p][o] = line_masks(p, o, RANKS);
}

/* splitmix64: fixed seed, so hash keys (and the bench signature) are stable. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void init_zobrist(void)
{
    uint64_t seed = 0x5869616e67716900ULL; /* "Xiangqi" */
    for (int p = 0; p < 16; p++)
        for (int sq = 0; sq < SQUARES; sq++)
            zobrist_piece[p][sq] = next_random(&seed);
    zobrist_side = next_random(&seed);
}

static void init_all(void)
{
    init_leapers();
    init_lines();
    init_zobrist();
}

void tables_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_all);
}
