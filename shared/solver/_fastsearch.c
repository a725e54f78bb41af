/*
 * The solver's two searches, compiled.
 *
 * These are the same searches as ``_depth_first`` and ``_best_first`` in
 * ``search.py`` over the same board as ``board.py``: the same moves in the
 * same order, the same safe moves, the same cuts and the same dead-end test
 * (``deadlock.py``), so each visits the same positions in the same order and
 * counts the same nodes (the tests compare them, node for node). Only the
 * representation differs:
 *
 * - columns are fixed arrays; a move shifts cards instead of building bytes;
 * - best first keeps a parent and a move per open position, not a snapshot,
 *   and walks the board through the tree to the position it expands next;
 * - the transposition table keeps a 128-bit hash of the canonical position
 *   instead of the key itself (16 bytes a position instead of about 150).
 *   The hash is of the same canonical position: the columns as a multiset
 *   (a sum of per-column hashes, so column order does not count), the cards
 *   left in the stock, the waste, and after a redeal the pass and the stock.
 *   Two positions sharing a hash would make the search skip one of them;
 *   with 128 bits and tens of millions of positions the chance of any such
 *   pair in a search is below 1e-20 (birthday bound n^2 / 2^129).
 *
 * Pure computation: no I/O. The budget (clock, node limit, progress) stays in
 * Python: the search calls ``check(nodes, depth, best)`` every 1,024 nodes
 * or so, exactly where the Python search looks at its budget (``depth`` is
 * the line's length in depth first and the open positions in best first).
 * It searches without the interpreter lock and takes it back only for that
 * call, to build the winning line and to raise an error, so other Python
 * threads (a server's event loop) run alongside.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCARDS 52
#define MAXCOLS 20
#define COLCAP 64
#define SWCAP 256
#define MAXPASSES 8
#define WASTE 100
#define STOCK 101
#define FOUNDATION 102
#define CHECK_EVERY 1024
#define DRAW_SCORE 100

enum { GROUP_NONE = 0, GROUP_SAME_SUIT = 1, GROUP_VALID = 2 };
enum { V_WON = 0, V_UNWINNABLE = 1, V_UNKNOWN = 2 };
enum { K_COL_COL, K_WASTE_COL, K_COL_HOME, K_WASTE_HOME, K_DRAW, K_REDEAL };

typedef struct {
    int packs;
    int nparents[NCARDS];
    uint8_t parents[NCARDS][NCARDS];
    int nneeds[NCARDS];
    uint8_t needs[NCARDS][NCARDS];
    int empty_any, empty_kings, group, draw, passes, total;
    uint8_t can_pack[NCARDS][NCARDS]; /* can_pack[c][p]: c may go on p */
} Rules;

typedef struct {
    uint8_t src, dst, count;
} Move;

typedef struct {
    uint8_t kind, src, dst, count, card;
} Undo;

typedef struct {
    int ncols;
    int len[MAXCOLS];
    uint8_t col[MAXCOLS][COLCAP];
    uint8_t stock[SWCAP];
    int nstock, si;
    uint8_t waste[SWCAP];
    int nwaste;
    int pass_no;
    int home[NCARDS];
    int nhome;
    /* Saved stocks, one per redeal, for undo. */
    uint8_t oldstock[MAXPASSES][SWCAP];
    int oldnstock[MAXPASSES], oldsi[MAXPASSES];
    /* Per-column hashes (two independent ones) and the waste's prefix hashes. */
    uint64_t ch1[MAXCOLS], ch2[MAXCOLS];
    uint64_t wh1[SWCAP + 1], wh2[SWCAP + 1];
    const Rules *rules;
} Board;

/* ------------------------------------------------------------------ hashing */

static inline uint64_t fmix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static void col_hash(Board *b, int i) {
    uint64_t h1 = 0x243f6a8885a308d3ULL, h2 = 0x13198a2e03707344ULL;
    const uint8_t *c = b->col[i];
    for (int j = 0; j < b->len[i]; j++) {
        h1 = (h1 ^ (uint64_t)(c[j] + 1)) * 0x100000001b3ULL;
        h2 = (h2 + (uint64_t)(c[j] + 7)) * 0x9e3779b97f4a7c15ULL;
        h2 ^= h2 >> 29;
    }
    b->ch1[i] = fmix64(h1 ^ ((uint64_t)b->len[i] << 56));
    b->ch2[i] = fmix64(h2 + 0xa4093822299f31d0ULL * (uint64_t)(b->len[i] + 1));
}

static inline void waste_push_hash(Board *b) {
    int n = b->nwaste; /* card already stored at waste[n-1] */
    uint64_t c = (uint64_t)b->waste[n - 1] + 1;
    b->wh1[n] = fmix64(b->wh1[n - 1] + c * 0x9e3779b97f4a7c15ULL);
    b->wh2[n] = fmix64((b->wh2[n - 1] ^ (c << 17)) * 0xc2b2ae3d27d4eb4fULL + 0x165667b19e3779f9ULL);
}

static void waste_rehash(Board *b) {
    b->wh1[0] = 0x082efa98ec4e6c89ULL;
    b->wh2[0] = 0x452821e638d01377ULL;
    int n = b->nwaste;
    for (int k = 1; k <= n; k++) {
        b->nwaste = k;
        waste_push_hash(b);
    }
    b->nwaste = n;
}

static void board_key(const Board *b, uint64_t *k1, uint64_t *k2) {
    uint64_t s1 = 0, s2 = 0;
    for (int i = 0; i < b->ncols; i++) {
        s1 += b->ch1[i];
        s2 += b->ch2[i];
    }
    uint64_t left = (uint64_t)(b->nstock - b->si);
    uint64_t x1 = s1 ^ fmix64(b->wh1[b->nwaste] + (left + 1) * 0xd6e8feb86659fd93ULL);
    uint64_t x2 = s2 + fmix64(b->wh2[b->nwaste] ^ ((left + 3) << 40));
    if (b->pass_no > 1) {
        /* After a redeal the stock is no longer the deal's: it is part of the key. */
        uint64_t h1 = (uint64_t)b->pass_no, h2 = (uint64_t)b->pass_no * 0x9e3779b97f4a7c15ULL;
        for (int j = b->si; j < b->nstock; j++) {
            h1 = fmix64(h1 + b->stock[j] + 1);
            h2 = (h2 ^ (uint64_t)(b->stock[j] + 1)) * 0x100000001b3ULL;
        }
        x1 ^= fmix64(h1 + 0x5851f42d4c957f2dULL);
        x2 += fmix64(h2);
    }
    *k1 = fmix64(x1);
    *k2 = fmix64(x2 ^ 0x2545f4914f6cdd1dULL);
}

/* ------------------------------------------------------------ position set */

typedef struct {
    uint64_t *slots; /* pairs (k1, k2); k1 == 0 marks a free slot */
    size_t mask, count;
} Seen;

static int seen_init(Seen *s, size_t cap) {
    s->slots = calloc(cap * 2, sizeof(uint64_t));
    if (!s->slots) return -1;
    s->mask = cap - 1;
    s->count = 0;
    return 0;
}

static void seen_free(Seen *s) {
    free(s->slots);
    s->slots = NULL;
}

/* Returns 1 if added, 0 if present, -1 when memory runs out. */
static int seen_add(Seen *s, uint64_t k1, uint64_t k2) {
    if (k1 == 0) k1 = 1;
    if ((s->count + 1) * 2 > s->mask + 1) {
        size_t cap = (s->mask + 1) * 2;
        uint64_t *slots = calloc(cap * 2, sizeof(uint64_t));
        if (!slots) return -1;
        for (size_t i = 0; i <= s->mask; i++) {
            uint64_t a = s->slots[2 * i];
            if (!a) continue;
            size_t j = a & (cap - 1);
            while (slots[2 * j]) j = (j + 1) & (cap - 1);
            slots[2 * j] = a;
            slots[2 * j + 1] = s->slots[2 * i + 1];
        }
        free(s->slots);
        s->slots = slots;
        s->mask = cap - 1;
    }
    size_t j = k1 & s->mask;
    for (;;) {
        uint64_t a = s->slots[2 * j];
        if (!a) break;
        if (a == k1 && s->slots[2 * j + 1] == k2) return 0;
        j = (j + 1) & s->mask;
    }
    s->slots[2 * j] = k1;
    s->slots[2 * j + 1] = k2;
    s->count++;
    return 1;
}

/* ------------------------------------------------------------ growable arrays */

typedef struct {
    void *data;
    size_t len, cap, size;
} Vec;

static int vec_reserve(Vec *v, size_t extra) {
    if (v->len + extra <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 1024;
    while (cap < v->len + extra) cap *= 2;
    void *d = realloc(v->data, cap * v->size);
    if (!d) return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

/* ------------------------------------------------------------------ board */

static inline int ready(const Board *b, int c) {
    if (c % 13 == 0) return b->home[c] < b->rules->packs;
    return b->home[c - 1] > b->home[c];
}

typedef struct {
    int score;
    Move m;
} Scored;

/* The moves of ``board.py``'s ``Board.moves``, in the same order. */
static int gen_moves(const Board *b, int waste_only, Scored *out) {
    const Rules *r = b->rules;
    int n = 0, empty = -1;
    for (int i = 0; i < b->ncols; i++)
        if (!b->len[i]) {
            empty = i;
            break;
        }
#define ADD(sc, s, d, k)                                                                  \
    do {                                                                                  \
        out[n].score = (sc);                                                              \
        out[n].m.src = (uint8_t)(s);                                                      \
        out[n].m.dst = (uint8_t)(d);                                                      \
        out[n].m.count = (uint8_t)(k);                                                    \
        n++;                                                                              \
    } while (0)
    if (!waste_only) {
        for (int i = 0; i < b->ncols; i++) {
            int len = b->len[i];
            if (!len) continue;
            int c = b->col[i][len - 1], r0 = c % 13;
            if (ready(b, c)) ADD(len == 1 ? 1050 - r0 : 1000 - r0, i, FOUNDATION, 1);
            if (len == 1) {
                for (int pi = 0; pi < r->nparents[c]; pi++) {
                    int p = r->parents[c][pi];
                    for (int d = 0; d < b->ncols; d++)
                        if (b->len[d] && b->col[d][b->len[d] - 1] == p) ADD(700, i, d, 1);
                }
                continue;
            }
            int under = b->col[i][len - 2];
            int settled = r->can_pack[c][under];
            int score = settled ? 60 : 600 - (under % 13);
            for (int pi = 0; pi < r->nparents[c]; pi++) {
                int p = r->parents[c][pi];
                for (int d = 0; d < b->ncols; d++)
                    if (d != i && b->len[d] && b->col[d][b->len[d] - 1] == p) ADD(score, i, d, 1);
            }
            if (empty >= 0 && (r->empty_any || (r->empty_kings && r0 == 12)))
                ADD(settled ? 40 : 200 - (under % 13), i, empty, 1);
        }
    }
    if (b->nwaste) {
        int c = b->waste[b->nwaste - 1], r0 = c % 13;
        if (ready(b, c)) ADD(900, WASTE, FOUNDATION, 1);
        for (int pi = 0; pi < r->nparents[c]; pi++) {
            int p = r->parents[c][pi];
            for (int d = 0; d < b->ncols; d++)
                if (b->len[d] && b->col[d][b->len[d] - 1] == p) ADD(500, WASTE, d, 1);
        }
        if (empty >= 0 && (r->empty_any || (r->empty_kings && r0 == 12))) ADD(100, WASTE, empty, 1);
    }
    if (!waste_only && r->group != GROUP_NONE) {
        for (int i = 0; i < b->ncols; i++) {
            int len = b->len[i];
            for (int k = 2; k <= len; k++) {
                int lower = b->col[i][len - k + 1], upper = b->col[i][len - k];
                if (r->group == GROUP_SAME_SUIT) {
                    if (upper != lower + 1 || lower % 13 == 12) break;
                } else if (!r->can_pack[lower][upper]) {
                    break;
                }
                int base = upper;
                for (int pi = 0; pi < r->nparents[base]; pi++) {
                    int p = r->parents[base][pi];
                    for (int d = 0; d < b->ncols; d++)
                        if (d != i && b->len[d] && b->col[d][b->len[d] - 1] == p) ADD(k == len ? 650 : 550, i, d, k);
                }
                if (empty >= 0 && k < len && (r->empty_any || (r->empty_kings && base % 13 == 12)))
                    ADD(250, i, empty, k);
            }
        }
    }
    if (b->si < b->nstock)
        ADD(DRAW_SCORE, STOCK, WASTE, 1);
    else if (b->nwaste && b->pass_no < r->passes)
        ADD(10, WASTE, STOCK, 1);
#undef ADD
    /* Stable sort, best first (Python's sort(reverse=True) keeps equal keys in order). */
    for (int i = 1; i < n; i++) {
        Scored x = out[i];
        int j = i - 1;
        while (j >= 0 && out[j].score < x.score) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = x;
    }
    return n;
}

/* Upper bound on the moves of one position: from each column a card to every
 * other column, the foundation or an empty one; the waste likewise; runs of 2
 * to 13 cards (ranks strictly fall along a run) to every column; a draw. */
#define MAXMOVES (MAXCOLS * (MAXCOLS + 2) + (MAXCOLS + 2) + MAXCOLS * 12 * (MAXCOLS + 1) + 1)

static int play(Board *b, Move m, Undo *u) {
    u->src = m.src;
    u->dst = m.dst;
    u->count = m.count;
    if (m.src == STOCK) {
        int n = b->rules->draw;
        if (n > b->nstock - b->si) n = b->nstock - b->si;
        for (int j = 0; j < n; j++) {
            b->waste[b->nwaste++] = b->stock[b->si++];
            waste_push_hash(b);
        }
        u->kind = K_DRAW;
        u->count = (uint8_t)n;
        return 0;
    }
    if (m.dst == STOCK) {
        int p = b->pass_no;
        if (p >= MAXPASSES) return -1;
        memcpy(b->oldstock[p], b->stock, (size_t)b->nstock);
        b->oldnstock[p] = b->nstock;
        b->oldsi[p] = b->si;
        memcpy(b->stock, b->waste, (size_t)b->nwaste);
        b->nstock = b->nwaste;
        b->si = 0;
        b->nwaste = 0;
        b->pass_no++;
        u->kind = K_REDEAL;
        return 0;
    }
    if (m.src == WASTE) {
        int c = b->waste[--b->nwaste];
        u->card = (uint8_t)c;
        if (m.dst == FOUNDATION) {
            b->home[c]++;
            b->nhome++;
            u->kind = K_WASTE_HOME;
        } else {
            if (b->len[m.dst] >= COLCAP) return -1;
            b->col[m.dst][b->len[m.dst]++] = (uint8_t)c;
            col_hash(b, m.dst);
            u->kind = K_WASTE_COL;
        }
        return 0;
    }
    if (m.dst == FOUNDATION) {
        int c = b->col[m.src][--b->len[m.src]];
        col_hash(b, m.src);
        b->home[c]++;
        b->nhome++;
        u->card = (uint8_t)c;
        u->kind = K_COL_HOME;
        return 0;
    }
    int k = m.count;
    if (b->len[m.dst] + k > COLCAP) return -1;
    memcpy(&b->col[m.dst][b->len[m.dst]], &b->col[m.src][b->len[m.src] - k], (size_t)k);
    b->len[m.dst] += k;
    b->len[m.src] -= k;
    col_hash(b, m.src);
    col_hash(b, m.dst);
    u->kind = K_COL_COL;
    return 0;
}

static void undo(Board *b, const Undo *u) {
    switch (u->kind) {
    case K_COL_COL: {
        int k = u->count;
        memcpy(&b->col[u->src][b->len[u->src]], &b->col[u->dst][b->len[u->dst] - k], (size_t)k);
        b->len[u->src] += k;
        b->len[u->dst] -= k;
        col_hash(b, u->src);
        col_hash(b, u->dst);
        break;
    }
    case K_COL_HOME:
        b->col[u->src][b->len[u->src]++] = u->card;
        col_hash(b, u->src);
        b->home[u->card]--;
        b->nhome--;
        break;
    case K_WASTE_COL:
        b->len[u->dst]--;
        col_hash(b, u->dst);
        b->waste[b->nwaste++] = u->card;
        waste_push_hash(b); /* a draw below this move may have reused the slot */
        break;
    case K_WASTE_HOME:
        b->waste[b->nwaste++] = u->card;
        waste_push_hash(b);
        b->home[u->card]--;
        b->nhome--;
        break;
    case K_DRAW:
        b->nwaste -= u->count;
        b->si -= u->count;
        break;
    case K_REDEAL: {
        int p = --b->pass_no;
        memcpy(b->waste, b->stock, (size_t)b->nstock);
        b->nwaste = b->nstock;
        memcpy(b->stock, b->oldstock[p], (size_t)b->oldnstock[p]);
        b->nstock = b->oldnstock[p];
        b->si = b->oldsi[p];
        waste_rehash(b);
        break;
    }
    }
}

typedef struct {
    Move m;
    Undo u;
} Auto;

static inline int all_home(const Board *b, int c) {
    const Rules *r = b->rules;
    for (int j = 0; j < r->nneeds[c]; j++)
        if (b->home[r->needs[c][j]] != r->packs) return 0;
    return 1;
}

/* ``Board.play_safe``: appends the safe moves played to ``out``; returns how many, or -1 (memory). */
static int play_safe(Board *b, int where, Vec *out) {
    if (where >= 0) {
        if (!b->len[where] || !all_home(b, b->col[where][b->len[where] - 1])) return 0;
    } else if (where == -1) {
        if (!b->nwaste || !all_home(b, b->waste[b->nwaste - 1])) return 0;
    }
    int done = 0, again = 1;
    while (again) {
        again = 0;
        for (int i = 0; i < b->ncols; i++) {
            while (b->len[i] && all_home(b, b->col[i][b->len[i] - 1])) {
                if (vec_reserve(out, 1)) return -1;
                Auto *a = (Auto *)out->data + out->len++;
                a->m.src = (uint8_t)i;
                a->m.dst = FOUNDATION;
                a->m.count = 1;
                play(b, a->m, &a->u);
                done++;
                again = 1;
            }
        }
        while (b->nwaste && all_home(b, b->waste[b->nwaste - 1])) {
            if (vec_reserve(out, 1)) return -1;
            Auto *a = (Auto *)out->data + out->len++;
            a->m.src = WASTE;
            a->m.dst = FOUNDATION;
            a->m.count = 1;
            play(b, a->m, &a->u);
            done++;
            again = 1;
        }
    }
    return done;
}

static inline int exposed_by(Move m) {
    if (m.dst == FOUNDATION || m.dst == STOCK) return -2;
    if (m.src == WASTE || m.src == STOCK) return -1;
    return m.src;
}

/* ``deadlock.dead``: whether the relaxation proves the position lost. */
static int dead(const Board *b) {
    const Rules *r = b->rules;
    if (r->group != GROUP_NONE) return 0;
    for (int i = 0; i < b->ncols; i++)
        if (!b->len[i]) return 0;
    int packs = r->packs;
    int reach[NCARDS], left_out[NCARDS], exposed[NCARDS];
    for (int c = 0; c < NCARDS; c++) {
        reach[c] = b->home[c];
        left_out[c] = 0;
        exposed[c] = 0;
    }
    int left[MAXCOLS];
    for (int i = 0; i < b->ncols; i++) {
        exposed[b->col[i][b->len[i] - 1]] = 1;
        left[i] = b->len[i];
    }
    uint8_t free_cards[2 * SWCAP];
    int nfree = 0;
    for (int j = b->si; j < b->nstock; j++) free_cards[nfree++] = b->stock[j];
    const uint8_t *stack = b->waste;
    int wleft;
    if (b->pass_no < r->passes) {
        for (int j = 0; j < b->nwaste; j++) free_cards[nfree++] = b->waste[j];
        wleft = 0;
    } else {
        wleft = b->nwaste;
    }
    uint8_t free_done[2 * SWCAP];
    memset(free_done, 0, (size_t)nfree);
    int can_empty = 0;
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int i = 0; i < b->ncols; i++) {
            int n = left[i];
            const uint8_t *col = b->col[i];
            while (n) {
                int c = col[n - 1];
                int ok = (c % 13 == 0) || reach[c - 1] > b->home[c] || (can_empty && (r->empty_any || (r->empty_kings && c % 13 == 12)));
                for (int pi = 0; !ok && pi < r->nparents[c]; pi++)
                    if (exposed[r->parents[c][pi]]) ok = 1;
                if (!ok) break;
                exposed[c] = 1;
                left_out[c]++;
                n--;
                if (n) exposed[col[n - 1]] = 1;
            }
            if (n != left[i]) {
                left[i] = n;
                changed = 1;
                if (n == 0) {
                    if (r->empty_any) return 0;
                    can_empty = 1;
                }
            }
        }
        while (wleft) {
            int c = stack[wleft - 1];
            int ok = (c % 13 == 0) || reach[c - 1] > b->home[c] || (can_empty && (r->empty_any || (r->empty_kings && c % 13 == 12)));
            for (int pi = 0; !ok && pi < r->nparents[c]; pi++)
                if (exposed[r->parents[c][pi]]) ok = 1;
            if (!ok) break;
            exposed[c] = 1;
            left_out[c]++;
            wleft--;
            changed = 1;
        }
        for (int j = 0; j < nfree; j++) {
            if (free_done[j]) continue;
            int c = free_cards[j];
            int ok = (c % 13 == 0) || reach[c - 1] > b->home[c] || (can_empty && (r->empty_any || (r->empty_kings && c % 13 == 12)));
            for (int pi = 0; !ok && pi < r->nparents[c]; pi++)
                if (exposed[r->parents[c][pi]]) ok = 1;
            if (!ok) continue;
            free_done[j] = 1;
            exposed[c] = 1;
            left_out[c]++;
            changed = 1;
        }
        for (int suit = 0; suit < NCARDS; suit += 13) {
            int prev = packs;
            for (int c = suit; c < suit + 13; c++) {
                int v = b->home[c] + left_out[c];
                if (v > prev) v = prev;
                if (v != reach[c]) {
                    reach[c] = v;
                    changed = 1;
                }
                prev = v;
            }
        }
    }
    for (int c = 0; c < NCARDS; c++)
        if (reach[c] < packs) return 1;
    return 0;
}

/* ------------------------------------------------------------- the search */

/* One move of the current line with the safe moves it set off. Both searches
 * keep their line as an array of structs that begin with a Step; the first
 * (the root) has no move, only the safe moves played at the start. */
typedef struct {
    Move move;
    Undo rec;
    size_t autos_start, autos_len;
} Step;

typedef struct {
    Step step;
    size_t moves_start, nmoves, i;
    int block; /* -1, or dst * 256 + count of the unit the move placed */
} Frame;

typedef struct {
    int verdict;
    int stopped; /* 0 none, 1 by check (see stop_obj), 2 cap, 3 memory */
    PyObject *stop_obj;
    long long nodes;
    int best;
    size_t stored;
    PyObject *line;
} Outcome;

enum { STEP_OK = 0, STEP_ERROR = -1, STEP_NOMEM = -2 };

/* Plays ``st->move`` and the safe moves it sets off, recording both in ``st``. */
static int step_play(Board *b, Step *st, Vec *autos) {
    if (play(b, st->move, &st->rec)) {
        PyGILState_STATE gil = PyGILState_Ensure();
        PyErr_SetString(PyExc_OverflowError, "a column or the waste outgrew the compiled board");
        PyGILState_Release(gil);
        return STEP_ERROR;
    }
    st->autos_start = autos->len;
    int na = play_safe(b, exposed_by(st->move), autos);
    if (na < 0) return STEP_NOMEM;
    st->autos_len = (size_t)na;
    return STEP_OK;
}

/* Takes back the safe moves of ``st`` and, unless it is the root, its move. */
static void step_undo(Board *b, const Step *st, Vec *autos, int root) {
    for (size_t j = st->autos_len; j-- > 0;) undo(b, &((Auto *)autos->data)[st->autos_start + j].u);
    autos->len = st->autos_start;
    if (!root) undo(b, &st->rec);
}

static PyObject *move_tuple(Move m) { return Py_BuildValue("(iii)", m.src, m.dst, m.count); }

static int append_move(PyObject *line, Move m) {
    PyObject *t = move_tuple(m);
    if (!t || PyList_Append(line, t)) {
        Py_XDECREF(t);
        return -1;
    }
    Py_DECREF(t);
    return 0;
}

static int append_step(PyObject *line, const Vec *autos, const Step *st, int root) {
    if (!root && append_move(line, st->move)) return -1;
    for (size_t j = st->autos_start; j < st->autos_start + st->autos_len; j++)
        if (append_move(line, ((Auto *)autos->data)[j].m)) return -1;
    return 0;
}

/* The winning line: the root's safe moves, each step's move and safe moves,
 * then ``last`` (the winning move, if any). ``steps`` holds ``n`` structs of ``stride``
 * bytes, each beginning with a Step. */
static PyObject *win_line(const Vec *autos, const void *steps, size_t stride, size_t n, const Step *last) {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *line = PyList_New(0);
    int ok = line != NULL;
    for (size_t s = 0; ok && s < n; s++)
        ok = !append_step(line, autos, (const Step *)((const char *)steps + s * stride), s == 0);
    if (ok && last) ok = !append_step(line, autos, last, 0);
    if (!ok) Py_CLEAR(line);
    PyGILState_Release(gil);
    return line;
}

/* Asks Python whether to stop (the budget); 1 stop, 0 go on, -1 error. */
static int ask_check(PyObject *check, Outcome *out, size_t depth) {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *res = PyObject_CallFunction(check, "LnI", out->nodes, (Py_ssize_t)depth, (unsigned)out->best);
    int rc = -1;
    if (res == Py_None) {
        Py_DECREF(res);
        rc = 0;
    } else if (res) {
        out->stopped = 1;
        out->stop_obj = res;
        rc = 1;
    }
    PyGILState_Release(gil);
    return rc;
}

static int push_moves(Board *b, Vec *moves, int waste_only, size_t *start, size_t *count) {
    if (vec_reserve(moves, MAXMOVES)) return -1;
    *start = moves->len;
    int n = gen_moves(b, waste_only, (Scored *)moves->data + moves->len);
    moves->len += (size_t)n;
    *count = (size_t)n;
    return 0;
}

enum { VISIT_NEW = 0, VISIT_SEEN = 1, VISIT_WON = 2 };

/* One child of the position the line of ``n`` structs (``stride`` bytes each,
 * each beginning with a Step) leads to: plays ``st->move`` and its safe moves,
 * counts the node, and either wins (the line is in ``out``) or looks the
 * position up in the table. The caller undoes the step unless it expands it. */
static int visit(Board *b, Step *st, Vec *autos, Seen *seen, Outcome *out, const void *line, size_t stride,
                 size_t n) {
    int e = step_play(b, st, autos);
    if (e != STEP_OK) return e;
    out->nodes++;
    if (b->nhome > out->best) {
        out->best = b->nhome;
        if (b->nhome == b->rules->total) {
            out->verdict = V_WON;
            out->stored = seen->count;
            out->line = win_line(autos, line, stride, n, st);
            return out->line ? VISIT_WON : STEP_ERROR;
        }
    }
    uint64_t k1, k2;
    board_key(b, &k1, &k2);
    int added = seen_add(seen, k1, k2);
    if (added < 0) return STEP_NOMEM;
    return added ? VISIT_NEW : VISIT_SEEN;
}

/* How either search ends when it cannot go on: memory running out is a budget
 * like any other (the answer is "unknown", 0); a Python error (-1) drops
 * what was built. */
static int search_end(Outcome *out, int status, size_t stored) {
    if (status == STEP_NOMEM) {
        out->verdict = V_UNKNOWN;
        out->stopped = 3;
        out->stored = stored;
        return 0;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_CLEAR(out->line);
    Py_CLEAR(out->stop_obj);
    PyGILState_Release(gil);
    return -1;
}

/* The root of either search: safe moves, then won or dead at once? 1 when
 * that settled it (``out`` filled), 0 to search on, negative on error. */
static int search_root(Board *b, Seen *seen, Vec *autos, Outcome *out) {
    out->nodes = 1;
    out->stopped = 0;
    out->stop_obj = NULL;
    out->line = NULL;
    if (seen_init(seen, 1 << 16)) return STEP_NOMEM;
    if (play_safe(b, -2, autos) < 0) return STEP_NOMEM;
    out->best = b->nhome;
    if (b->nhome == b->rules->total) {
        Step root = {.autos_start = 0, .autos_len = autos->len};
        out->verdict = V_WON;
        out->line = win_line(autos, &root, sizeof root, 1, NULL); /* the root's safe moves only */
        return out->line ? 1 : STEP_ERROR;
    }
    if (dead(b)) {
        out->verdict = V_UNWINNABLE;
        out->stored = 1;
        return 1;
    }
    uint64_t k1, k2;
    board_key(b, &k1, &k2);
    if (seen_add(seen, k1, k2) < 0) return STEP_NOMEM;
    return 0;
}

static int depth_first(Board *b, int max_waste, int prune_dead, PyObject *check, Outcome *out) {
    Seen seen = {0};
    Vec autos = {NULL, 0, 0, sizeof(Auto)};
    Vec moves = {NULL, 0, 0, sizeof(Scored)};
    Vec stack = {NULL, 0, 0, sizeof(Frame)};
    int rc = -1;
    int r = search_root(b, &seen, &autos, out);
    if (r == 1) {
        out->stored = out->verdict == V_WON ? 0 : 1; /* as the Python search reports them */
        rc = 0;
        goto done;
    }
    if (r == STEP_ERROR) goto fail;
    if (r == STEP_NOMEM || vec_reserve(&stack, 1)) goto nomem;
    Frame *f = (Frame *)stack.data;
    memset(f, 0, sizeof *f);
    f->step.autos_len = autos.len;
    f->block = -1;
    if (push_moves(b, &moves, 0, &f->moves_start, &f->nmoves)) goto nomem;
    stack.len = 1;
    long long next_check = CHECK_EVERY;
    int capped = 0;
    while (stack.len) {
        f = (Frame *)stack.data + stack.len - 1;
        if (f->i >= f->nmoves) {
            step_undo(b, &f->step, &autos, stack.len == 1);
            moves.len = f->moves_start;
            stack.len--;
            continue;
        }
        Move m = ((Scored *)moves.data)[f->moves_start + f->i].m;
        f->i++;
        if (f->block >= 0 && m.src == f->block / 256 && m.count == f->block % 256) continue;
        Step st = {.move = m};
        int v = visit(b, &st, &autos, &seen, out, stack.data, sizeof(Frame), stack.len);
        if (v == STEP_ERROR) goto fail;
        if (v == STEP_NOMEM) goto nomem;
        if (v == VISIT_WON) {
            rc = 0;
            goto done;
        }
        int expand = v == VISIT_NEW;
        if (expand && max_waste >= 0 && b->nwaste > max_waste) {
            capped = 1;
            expand = 0;
        }
        if (expand && prune_dead && dead(b)) expand = 0;
        if (!expand) {
            step_undo(b, &st, &autos, 0);
            continue;
        }
        if (vec_reserve(&stack, 1)) goto nomem;
        f = (Frame *)stack.data + stack.len;
        memset(f, 0, sizeof *f);
        f->step = st;
        f->block = -1;
        int waste_only = 0;
        if (!st.autos_len && m.dst < MAXCOLS)
            f->block = m.dst * 256 + m.count;
        else if (!st.autos_len)
            waste_only = (m.src == STOCK || m.dst == STOCK);
        if (push_moves(b, &moves, waste_only, &f->moves_start, &f->nmoves)) goto nomem;
        stack.len++;
        if (out->nodes >= next_check) {
            next_check = out->nodes + CHECK_EVERY;
            int c = ask_check(check, out, stack.len);
            if (c < 0) goto fail;
            if (c) break;
        }
    }
    out->stored = seen.count;
    if (out->stopped || capped) {
        out->verdict = V_UNKNOWN;
        if (!out->stopped) out->stopped = 2;
    } else {
        out->verdict = V_UNWINNABLE;
    }
    rc = 0;
    goto done;
nomem:
    rc = search_end(out, STEP_NOMEM, seen.count);
    goto done;
fail:
    rc = search_end(out, STEP_ERROR, 0);
done:
    seen_free(&seen);
    free(autos.data);
    free(moves.data);
    free(stack.data);
    return rc;
}

/* ``Board.score``: how promising a position looks to best first. */
static int board_score(const Board *b) {
    const Rules *r = b->rules;
    int junk = 0, empties = 0;
    for (int i = 0; i < b->ncols; i++) {
        int len = b->len[i];
        if (!len) {
            empties++;
            continue;
        }
        for (int j = 1; j < len; j++)
            if (!r->can_pack[b->col[i][j]][b->col[i][j - 1]]) junk++;
    }
    return 20 * b->nhome - 4 * junk - b->nwaste + 6 * empties;
}

/* Best first keeps no board per open position: a node is its parent and the
 * move from it (safe moves follow deterministically), and the board walks the
 * tree to whichever node comes next, undoing to the common ancestor. */
typedef struct {
    uint32_t parent;
    Move m;
    uint8_t autos; /* whether the move sent cards home (then no cut follows it) */
} Node;

typedef struct {
    int32_t score, counter;
    uint32_t node;
} HeapItem;

typedef struct {
    Step step;
    uint32_t node;
} PathEntry;

static inline int heap_less(const HeapItem *a, const HeapItem *b) {
    /* Python pops the smallest (-score, -counter): best score, then newest. */
    if (a->score != b->score) return a->score > b->score;
    return a->counter > b->counter;
}

static void heap_push(HeapItem *h, size_t n, HeapItem x) {
    size_t i = n;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!heap_less(&x, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static HeapItem heap_pop(HeapItem *h, size_t n) {
    HeapItem top = h[0], x = h[n - 1];
    size_t i = 0, m = n - 1;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && heap_less(&h[c + 1], &h[c])) c++;
        if (!heap_less(&h[c], &x)) break;
        h[i] = h[c];
        i = c;
    }
    if (m) h[i] = x;
    return top;
}

/* Walk the board from the node at the end of ``path`` to node ``target``. */
static int goto_node(Board *b, const Vec *nodes, Vec *path, Vec *autos, Vec *chain, uint32_t target) {
    const Node *nd = (const Node *)nodes->data;
    chain->len = 0;
    for (uint32_t x = target; x != 0; x = nd[x].parent) {
        if (vec_reserve(chain, 1)) return STEP_NOMEM;
        ((uint32_t *)chain->data)[chain->len++] = x;
    }
    /* chain holds target .. first child of the root; the path holds root .. current. */
    size_t depth = chain->len, common = 1;
    const uint32_t *ch = (const uint32_t *)chain->data;
    while (common < path->len && common <= depth && ((PathEntry *)path->data)[common].node == ch[depth - common])
        common++;
    while (path->len > common) {
        step_undo(b, &((PathEntry *)path->data)[path->len - 1].step, autos, 0);
        path->len--;
    }
    for (size_t k = common; k <= depth; k++) {
        if (vec_reserve(path, 1)) return STEP_NOMEM;
        PathEntry *e = (PathEntry *)path->data + path->len;
        e->node = ch[depth - k];
        e->step.move = nd[e->node].m;
        int r = step_play(b, &e->step, autos);
        if (r != STEP_OK) return r;
        path->len++;
    }
    return STEP_OK;
}

static int best_first(Board *b, PyObject *check, Outcome *out) {
    Seen seen = {0};
    Vec autos = {NULL, 0, 0, sizeof(Auto)};
    Vec moves = {NULL, 0, 0, sizeof(Scored)};
    Vec nodes = {NULL, 0, 0, sizeof(Node)};
    Vec heap = {NULL, 0, 0, sizeof(HeapItem)};
    Vec path = {NULL, 0, 0, sizeof(PathEntry)};
    Vec chain = {NULL, 0, 0, sizeof(uint32_t)};
    int rc = -1;
    int r = search_root(b, &seen, &autos, out);
    if (r == 1) {
        out->stored = 1;
        rc = 0;
        goto done;
    }
    if (r == STEP_ERROR) goto fail;
    if (r == STEP_NOMEM || vec_reserve(&nodes, 1) || vec_reserve(&heap, 1) || vec_reserve(&path, 1)) goto nomem;
    memset(nodes.data, 0, sizeof(Node));
    nodes.len = 1;
    PathEntry *root = (PathEntry *)path.data;
    memset(root, 0, sizeof *root);
    root->step.autos_len = autos.len;
    path.len = 1;
    heap_push((HeapItem *)heap.data, 0, (HeapItem){board_score(b), 0, 0});
    heap.len = 1;
    int32_t counter = 0;
    long long next_check = CHECK_EVERY;
    while (heap.len && !out->stopped) {
        HeapItem it = heap_pop((HeapItem *)heap.data, heap.len);
        heap.len--;
        int g = goto_node(b, &nodes, &path, &autos, &chain, it.node);
        if (g == STEP_ERROR) goto fail;
        if (g == STEP_NOMEM) goto nomem;
        Node here = ((Node *)nodes.data)[it.node];
        int block = -1, waste_only = 0;
        if (it.node != 0 && !here.autos) {
            if (here.m.dst < MAXCOLS)
                block = here.m.dst * 256 + here.m.count;
            else
                waste_only = here.m.src == STOCK || here.m.dst == STOCK;
        }
        moves.len = 0;
        size_t ms, nm;
        if (push_moves(b, &moves, waste_only, &ms, &nm)) goto nomem;
        for (size_t mi = 0; mi < nm; mi++) {
            Move m = ((Scored *)moves.data)[ms + mi].m;
            if (block >= 0 && m.src == block / 256 && m.count == block % 256) continue;
            Step st = {.move = m};
            int v = visit(b, &st, &autos, &seen, out, path.data, sizeof(PathEntry), path.len);
            if (v == STEP_ERROR) goto fail;
            if (v == STEP_NOMEM) goto nomem;
            if (v == VISIT_WON) {
                rc = 0;
                goto done;
            }
            int lost = v == VISIT_NEW && dead(b);
            if (v == VISIT_NEW && !lost) {
                if (vec_reserve(&nodes, 1) || vec_reserve(&heap, 1) || nodes.len >= UINT32_MAX) goto nomem;
                Node *n = (Node *)nodes.data + nodes.len;
                n->parent = it.node;
                n->m = m;
                n->autos = st.autos_len > 0;
                counter++;
                heap_push((HeapItem *)heap.data, heap.len, (HeapItem){board_score(b), counter, (uint32_t)nodes.len});
                heap.len++;
                nodes.len++;
            }
            step_undo(b, &st, &autos, 0);
            if (lost) continue; /* as in Python, the budget is looked at after the other positions */
            if (out->nodes >= next_check) {
                next_check = out->nodes + CHECK_EVERY;
                int c = ask_check(check, out, heap.len);
                if (c < 0) goto fail;
                if (c) break;
            }
        }
    }
    out->stored = seen.count;
    out->verdict = out->stopped ? V_UNKNOWN : V_UNWINNABLE;
    rc = 0;
    goto done;
nomem:
    rc = search_end(out, STEP_NOMEM, seen.count);
    goto done;
fail:
    rc = search_end(out, STEP_ERROR, 0);
done:
    seen_free(&seen);
    free(autos.data);
    free(moves.data);
    free(nodes.data);
    free(heap.data);
    free(path.data);
    free(chain.data);
    return rc;
}

/* ------------------------------------------------------------ Python glue */

static int bytes_arg(PyObject *o, const char *what, const uint8_t **data, Py_ssize_t *n, Py_ssize_t cap) {
    if (!PyBytes_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes", what);
        return -1;
    }
    *data = (const uint8_t *)PyBytes_AS_STRING(o);
    *n = PyBytes_GET_SIZE(o);
    if (*n > cap) {
        PyErr_Format(PyExc_OverflowError, "%s holds %zd cards, more than the compiled board's %zd", what, *n, cap);
        return -1;
    }
    for (Py_ssize_t j = 0; j < *n; j++)
        if ((*data)[j] >= NCARDS) {
            PyErr_Format(PyExc_ValueError, "%s holds a card value out of range", what);
            return -1;
        }
    return 0;
}

static int table_arg(PyObject *seq, const char *what, int counts[NCARDS], uint8_t rows[NCARDS][NCARDS]) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != NCARDS) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s must have 52 rows", what);
        return -1;
    }
    for (int c = 0; c < NCARDS; c++) {
        const uint8_t *d;
        Py_ssize_t n;
        if (bytes_arg(PySequence_Fast_GET_ITEM(fast, c), what, &d, &n, NCARDS)) {
            Py_DECREF(fast);
            return -1;
        }
        counts[c] = (int)n;
        memcpy(rows[c], d, (size_t)n);
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *py_search(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"strategy", "cols", "stock", "si", "waste", "pass_no", "home", "packs", "parents", "needs",
                            "empty_any", "empty_kings", "group", "draw", "passes", "total", "max_waste",
                            "prune_dead", "check", NULL};
    PyObject *cols, *stock, *waste, *home, *parents, *needs, *check;
    int strategy, si, pass_no, max_waste, prune_dead;
    Rules *r = calloc(1, sizeof(Rules));
    Board *b = calloc(1, sizeof(Board));
    PyObject *result = NULL;
    (void)self;
    if (!r || !b) {
        PyErr_NoMemory();
        goto out;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOOiOiOiOOppiiiiipO", names, &strategy, &cols, &stock, &si, &waste, &pass_no,
                                     &home, &r->packs, &parents, &needs, &r->empty_any, &r->empty_kings, &r->group,
                                     &r->draw, &r->passes, &r->total, &max_waste, &prune_dead, &check))
        goto out;
    if (table_arg(parents, "parents", r->nparents, r->parents) || table_arg(needs, "needs", r->nneeds, r->needs))
        goto out;
    for (int c = 0; c < NCARDS; c++)
        for (int j = 0; j < r->nparents[c]; j++) r->can_pack[c][r->parents[c][j]] = 1;
    if (r->passes > MAXPASSES || pass_no < 1 || pass_no > r->passes + 1) {
        PyErr_SetString(PyExc_ValueError, "pass number out of range for the compiled board");
        goto out;
    }
    b->rules = r;
    b->pass_no = pass_no;
    PyObject *fast = PySequence_Fast(cols, "cols must be a sequence of bytes");
    if (!fast) goto out;
    Py_ssize_t ncols = PySequence_Fast_GET_SIZE(fast);
    if (ncols > MAXCOLS) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_OverflowError, "too many columns for the compiled board");
        goto out;
    }
    b->ncols = (int)ncols;
    for (int i = 0; i < b->ncols; i++) {
        const uint8_t *d;
        Py_ssize_t n;
        /* Room for a full run of 13 on top of the column as it is. */
        if (bytes_arg(PySequence_Fast_GET_ITEM(fast, i), "a column", &d, &n, COLCAP - 14)) {
            Py_DECREF(fast);
            goto out;
        }
        memcpy(b->col[i], d, (size_t)n);
        b->len[i] = (int)n;
        col_hash(b, i);
    }
    Py_DECREF(fast);
    const uint8_t *d;
    Py_ssize_t n, nw;
    if (bytes_arg(stock, "the stock", &d, &n, SWCAP / 2)) goto out;
    memcpy(b->stock, d, (size_t)n);
    b->nstock = (int)n;
    if (si < 0 || si > n) {
        PyErr_SetString(PyExc_ValueError, "stock index out of range");
        goto out;
    }
    b->si = si;
    if (bytes_arg(waste, "the waste", &d, &nw, SWCAP / 2)) goto out;
    memcpy(b->waste, d, (size_t)nw);
    b->nwaste = (int)nw;
    waste_rehash(b);
    if (bytes_arg(home, "home", &d, &n, NCARDS) || n != NCARDS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "home must have 52 counts");
        goto out;
    }
    for (int c = 0; c < NCARDS; c++) {
        b->home[c] = d[c];
        b->nhome += d[c];
    }
    Outcome o;
    memset(&o, 0, sizeof o);
    if (strategy != 0 && strategy != 1) {
        PyErr_SetString(PyExc_ValueError, "strategy is 0 (depth first) or 1 (best first)");
        goto out;
    }
    /* The search runs without the interpreter lock (other threads, an event loop say, go
     * on meanwhile); it takes the lock back only to call ``check`` and to build the line. */
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = strategy == 0 ? depth_first(b, max_waste, prune_dead, check, &o) : best_first(b, check, &o);
    Py_END_ALLOW_THREADS
    if (failed) goto out;
    PyObject *line = o.line ? o.line : PyList_New(0);
    if (!line) {
        Py_XDECREF(o.stop_obj);
        goto out;
    }
    PyObject *stopped;
    if (o.stopped == 1)
        stopped = o.stop_obj;
    else if (o.stopped == 2)
        stopped = PyUnicode_FromString("cap");
    else if (o.stopped == 3)
        stopped = PyUnicode_FromString("memory");
    else
        stopped = Py_NewRef(Py_None);
    result = Py_BuildValue("(iNLinN)", o.verdict, line, o.nodes, o.best, (Py_ssize_t)o.stored, stopped);
out:
    free(r);
    free(b);
    return result;
}

static PyMethodDef methods[] = {
    {"search", (PyCFunction)(void (*)(void))py_search, METH_VARARGS | METH_KEYWORDS,
     "search(strategy, **position_and_rules) -> (verdict, line, nodes, best, stored, stopped)\n\n"
     "The depth-first (0) or best-first (1) search of search.py, compiled; see shared/solver/fast.py."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_fastsearch",
    .m_doc = "The solver's searches, compiled (see fast.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__fastsearch(void) { return PyModule_Create(&module); }
