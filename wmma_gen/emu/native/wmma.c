/* D = A @ B + C for the 16x16x16 WMMA rows with f32 or i32 accumulators -- v_wmma_f32_16x16x16_
 * {f16,bf16} and v_wmma_i32_16x16x16_{iu8,iu4}, gfx11 and gfx12 -- over W waves, in blocks of `step` <= WB waves. The register file keeps one VGPR of all
 * waves together (a 32 KiB stride between the VGPRs of one wave at 256 waves: every VGPR of a
 * wave maps to the same cache set), so each block first copies its waves' part of every VGPR
 * (step x 128 consecutive bytes) to local buffers, then decodes, multiplies and writes D there,
 * and copies D out the same way.
 *
 * The same arithmetic as the numpy paths (emu/isa/wmma_f32acc.py, wmma11.planned_f32_acc, the
 * integer rows' numpy matmul),
 * bit for bit (tests/emu/test_wmma_native.py):
 *   - decode is exact: F16C's vcvtph2ps converts f16 to f32 exactly, subnormals included (or,
 *     without F16C: an f16's magnitude bits moved to f32 bits 27..13 are the f32 pattern of
 *     its value times 2^-112, and times 2^112 is exact); a bf16 is the top half of an f32;
 *     both widen exactly to double;
 *   - each product of two f16/bf16 values is exact in double (<= 2 x 11 significant bits), so
 *     a fused or unfused multiply-add gives the same sum; k is summed in order 0..15 starting
 *     from +0 (as BLAS does for these sizes), then C is added and the double is rounded once
 *     to f32 (round to nearest even; beyond the f32 range -> +-inf, IEEE 754 / C Annex F);
 *   - inf/NaN in A, B or C of a block: the call returns 1 before writing that block, so the
 *     caller runs the rest through the reference path (IEEE inf*0, the canonical quiet NaN).
 *   - iu8/iu4 (RDNA3 ISA guide §7.9, §7.5 NEG: signed or unsigned per operand): 8- and 4-bit
 *     integers are exact in double, and so is every partial sum (|sum| <= 16 * 255^2 + 2^31 <
 *     2^53); the exact result wraps to 32 bits, or saturates with CLMP.
 * Operands: VGPR r, wave w, lane l at base[r * reg_stride + w * wave_stride + l] (uint32 words,
 * lanes contiguous). Each operand is given as 16 rows -- A^T (k-major), B, C/D -- and row q
 * is 16 consecutive lanes lane[q] .. lane[q] + 15 of VGPR reg[q] (16-bit operands: the half
 * shift[q], 0 low or 16 high). Both gfx11 and gfx12 layouts are of this form (RDNA3 ISA guide
 * §7.9 tables; RDNA4 per ROCm's matrix instruction calculator; emu/isa/wmma_f32acc.py checks
 * every plan before it calls here), which lets decode and the multiply-add run 16 lanes wide.
 * gfx11 replication (RDNA3 ISA guide §7.9: lanes 0-15 of A/B are replicated into lanes
 * 16-31): with `replicated`, every VGPR of A and B must hold the same word in lane l and l + 16.
 * D (C's layout) is written block by block to d (d_rs, d_ws as for the operands), each block
 * after all of its reads, so a block's D may overlap its A, B or C. Return 0 when every wave is
 * done; 1 (inf/NaN) or 2 (not replicated) with *done = the waves before the failing block,
 * whose D is written -- the waves from *done on are untouched, and the caller runs them through
 * the reference path (1) or names the lanes of the fault (2).
 */
#include <stdint.h>
#include <string.h>
#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>    /* vcvtph2ps: f16 -> f32 in one instruction */
#endif

#define WB 32           /* most waves per block: the A, B, C, D words of a block are 4 x 32 KiB
                           (in L2; 32 ran 20-30% faster than 8 with operands coming from DRAM) */
#define MAX_REGS 8
#define LOCAL (MAX_REGS * WB * 32 + 16)    /* + 64 bytes: the four buffers do not alias mod 4 KiB */

/* 4-wide vectors: AVX2 or SSE2 registers (AVX-512 CPUs run them too); 8-wide ones made the
 * kernel 10x slower on CPUs without AVX-512. */
typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
#define NV 4            /* vectors per 16-element row */

/* Element types of A and B (the parameter block's codes) and D. */
enum { F16 = 0, BF16 = 1, U8 = 2, I8 = 3, U4 = 4, I4 = 5 };
enum { OUT_F32 = 0, OUT_I32_WRAP = 1, OUT_I32_CLAMP = 2 };
typedef int64_t v4l __attribute__((vector_size(32)));

typedef struct {
    const uint32_t *base;
    int64_t reg_stride, wave_stride;
    int regs;
    const uint8_t *reg, *lane, *shift;
} operand;

/* Words of VGPRs 0..regs-1, waves w0..w0+nb-1 -> local[r][wb][32]. */
static void load_block(const operand *o, int64_t w0, int nb, uint32_t *local) {
    for (int r = 0; r < o->regs; r++) {
        const uint32_t *src = o->base + r * o->reg_stride + w0 * o->wave_stride;
        uint32_t *dst = local + r * WB * 32;
        if (o->wave_stride == 32)
            memcpy(dst, src, (size_t)nb * 32 * sizeof(uint32_t));
        else
            for (int wb = 0; wb < nb; wb++)
                memcpy(dst + wb * 32, src + wb * o->wave_stride, 32 * sizeof(uint32_t));
    }
}

static int halves_replicated(const uint32_t *local, int regs, int nb) {
    uint32_t diff = 0;
    for (int r = 0; r < regs; r++)
        for (int wb = 0; wb < nb; wb++)
            for (int l = 0; l < 16; l++)
                diff |= local[(r * WB + wb) * 32 + l] ^ local[(r * WB + wb) * 32 + l + 16];
    return diff == 0;
}

static inline int row_at(const operand *o, int wb, int q) {     /* index of row q in a local block */
    return (o->reg[q] * WB + wb) * 32 + o->lane[q];
}

/* Whether any element of VGPRs 0..regs-1 of the first nb waves of a local block is inf or NaN:
 * both 16-bit halves of each word (f16: exponent 0x7C00, bf16: 0x7F80), or the f32 word. Lanes
 * an instruction does not read (gfx11 lanes 16-31) count too: at worst the reference path runs
 * for nothing. */
static int has_special(const uint32_t *local, int regs, int nb, uint32_t exp_mask) {
    uint32_t found = 0;
    uint32_t lo = exp_mask & 0xFFFFu, hi = exp_mask >> 16;
    for (int r = 0; r < regs; r++) {
        const uint32_t *p = local + r * WB * 32;
        for (int i = 0; i < nb * 32; i++) {
            uint32_t x = p[i] & exp_mask;
            found |= (lo && (x & 0xFFFFu) == lo) | ((x >> 16) == hi);
        }
    }
    return found != 0;
}

/* 4 elements (the half, byte or nibble at `shift` of 4 words) -> exact doubles. */
static inline v4d decode4(const uint32_t *p, int shift, int type) {
    v4u w;
    memcpy(&w, p, sizeof w);
    union { v4u u; v4f f; } x;
    switch (type) {
    case BF16:                                   /* a bf16 is the top half of an f32 */
        x.u = shift ? w & 0xFFFF0000u : w << 16;
        return __builtin_convertvector(x.f, v4d);
    case U8:
        return __builtin_convertvector((v4i)((w >> (uint32_t)shift) & 0xFFu), v4d);
    case I8:                                     /* the byte to the top, arithmetic shift back */
        return __builtin_convertvector((v4i)(w << (uint32_t)(24 - shift)) >> 24, v4d);
    case U4:
        return __builtin_convertvector((v4i)((w >> (uint32_t)shift) & 0xFu), v4d);
    case I4:
        return __builtin_convertvector((v4i)(w << (uint32_t)(28 - shift)) >> 28, v4d);
    default:
        break;
    }
#if defined(__F16C__) && defined(__AVX__)
    __m128i hv = shift ? _mm_srli_epi32((__m128i)w, 16) : _mm_and_si128((__m128i)w, _mm_set1_epi32(0xFFFF));
    x.f = (v4f)_mm_cvtph_ps(_mm_packus_epi32(hv, hv));       /* exact, subnormals included */
    return __builtin_convertvector(x.f, v4d);
#else
    v4u h = (w >> (uint32_t)shift) & 0xFFFFu;
    x.u = ((h & 0x8000u) << 16) | ((h & 0x7FFFu) << 13);
    return __builtin_convertvector(x.f, v4d) * 0x1p112;
#endif
}

/* 4 C words -> exact doubles: f32 values, or int32 for the integer rows. */
static inline v4d load_c4(const uint32_t *p, int out) {
    if (out != OUT_F32) {
        v4i i;
        memcpy(&i, p, sizeof i);
        return __builtin_convertvector(i, v4d);
    }
    v4f f;
    memcpy(&f, p, sizeof f);
    return __builtin_convertvector(f, v4d);
}

/* 4 D values -> their words: f32 by one rounding, or the exact integer wrapped/saturated. */
static inline void store_d4(uint32_t *p, v4d d, int out) {
    if (out == OUT_F32) {
        v4f f = __builtin_convertvector(d, v4f);
        memcpy(p, &f, sizeof f);
        return;
    }
    v4l l = __builtin_convertvector(d, v4l);      /* exact: an integer below 2^53 */
    for (int i = 0; i < 4; i++) {
        int64_t v = l[i];
        if (out == OUT_I32_CLAMP)
            v = v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v;
        p[i] = (uint32_t)v;                       /* two's complement wrap to 32 bits */
    }
}

/* Rows 0..15 of a 16-bit operand of wave wb of a local block -> out[row][16]. */
static inline void decode_rows(const operand *o, const uint32_t *local, int wb, int type, v4d out[16][NV]) {
    for (int q = 0; q < 16; q++) {
        const uint32_t *p = local + row_at(o, wb, q);
        for (int j = 0; j < NV; j++)
            out[q][j] = decode4(p + 4 * j, o->shift[q], type);
    }
}

static int wmma_16x16x16(int64_t waves, int a_type, int b_type, int out, int replicated,
                  const uint32_t *a, int64_t a_rs, int64_t a_ws, int a_regs,
                  const uint8_t *a_reg, const uint8_t *a_lane, const uint8_t *a_shift,
                  const uint32_t *b, int64_t b_rs, int64_t b_ws, int b_regs,
                  const uint8_t *b_reg, const uint8_t *b_lane, const uint8_t *b_shift,
                  const uint32_t *c, int64_t c_rs, int64_t c_ws, int c_regs,
                  const uint8_t *c_reg, const uint8_t *c_lane,
                  uint32_t *d, int64_t d_rs, int64_t d_ws, int step, int64_t *done) {
    operand oa = {a, a_rs, a_ws, a_regs, a_reg, a_lane, a_shift};
    operand ob = {b, b_rs, b_ws, b_regs, b_reg, b_lane, b_shift};
    operand oc = {c, c_rs, c_ws, c_regs, c_reg, c_lane, NULL};
    if (a_regs > MAX_REGS || b_regs > MAX_REGS || c_regs > MAX_REGS)
        return 3;
    static _Thread_local uint32_t local[4][LOCAL] __attribute__((aligned(64)));
    uint32_t *la = local[0], *lb = local[1], *lc = local[2], *ld = local[3];
    v4d at[16][NV], bm[16][NV];          /* A^T[k][m], B[k][n] */
    if (step < 1 || step > WB)
        return 3;
    for (int64_t w0 = 0; w0 < waves; w0 += step) {
        int nb = waves - w0 < step ? (int)(waves - w0) : step;
        load_block(&oa, w0, nb, la);
        load_block(&ob, w0, nb, lb);
        load_block(&oc, w0, nb, lc);
        if (replicated && !(halves_replicated(la, a_regs, nb) && halves_replicated(lb, b_regs, nb)))
            return *done = w0, 2;
        uint32_t exp_a = a_type == F16 ? 0x7C007C00u : 0x7F807F80u, exp_b = b_type == F16 ? 0x7C007C00u : 0x7F807F80u;
        if ((a_type <= BF16 && has_special(la, a_regs, nb, exp_a)) ||
            (b_type <= BF16 && has_special(lb, b_regs, nb, exp_b)) ||
            (out == OUT_F32 && has_special(lc, c_regs, nb, 0x7F800000u)))
            return *done = w0, 1;      /* inf/NaN in this block: its D is not written */
        for (int wb = 0; wb < nb; wb++) {
            decode_rows(&oa, la, wb, a_type, at);
            decode_rows(&ob, lb, wb, b_type, bm);
            const double *as = (const double *)at;
            for (int m0 = 0; m0 < 16; m0 += 2) {
                v4d acc[2][NV] = {{{0}}};               /* D[m0 + i][4j .. 4j+3], from +0 */
                for (int k = 0; k < 16; k++)
                    for (int i = 0; i < 2; i++) {
                        double x = as[k * 16 + m0 + i];
                        for (int j = 0; j < NV; j++)
                            acc[i][j] += x * bm[k][j];
                    }
                for (int i = 0; i < 2; i++) {
                    int row = row_at(&oc, wb, m0 + i);
                    for (int j = 0; j < NV; j++)
                        store_d4(ld + row + 4 * j, acc[i][j] + load_c4(lc + row + 4 * j, out), out);
                }
            }
        }
        for (int r = 0; r < c_regs; r++) {
            uint32_t *dst = d + r * d_rs + w0 * d_ws;
            if (d_ws == 32)
                memcpy(dst, ld + r * WB * 32, (size_t)nb * 32 * sizeof(uint32_t));
            else
                for (int wb = 0; wb < nb; wb++)
                    memcpy(dst + wb * d_ws, ld + (r * WB + wb) * 32, 32 * sizeof(uint32_t));
        }
    }
    *done = waves;
    return 0;
}

/* The entry point: one block of int64 parameters (a ctypes call converts each argument, and
 * 30 of them cost more than a small WMMA; emu/isa/wmma_native.py fills the block):
 *   [0] waves  [1] A element type (F16, BF16, U8, I8, U4, I4)  [2] replicated
 *   [3..9]   A: base, VGPR stride, wave stride (words), VGPRs, row tables reg, lane, shift
 *   [10..16] B: the same
 *   [17..22] C: base, VGPR stride, wave stride, VGPRs, row tables reg, lane
 *   [23..25] D: base, VGPR stride, wave stride
 *   [26]     waves per block (1..WB; tests use small blocks to reach the later-block paths)
 *   [27]     out: waves done
 *   [28]     B element type  [29] D type (OUT_F32, OUT_I32_WRAP, OUT_I32_CLAMP) */
#define PTR(T, x) ((T)(intptr_t)(x))
#define ABI 3           /* the parameter block's layout; emu/native/__init__.py checks it on load */

int wmma_native_abi(void) {
    return ABI;
}

int wmma_native_call(int64_t *p) {
    return wmma_16x16x16(p[0], (int)p[1], (int)p[28], (int)p[29], (int)p[2],
                         PTR(const uint32_t *, p[3]), p[4], p[5], (int)p[6],
                         PTR(const uint8_t *, p[7]), PTR(const uint8_t *, p[8]), PTR(const uint8_t *, p[9]),
                         PTR(const uint32_t *, p[10]), p[11], p[12], (int)p[13],
                         PTR(const uint8_t *, p[14]), PTR(const uint8_t *, p[15]), PTR(const uint8_t *, p[16]),
                         PTR(const uint32_t *, p[17]), p[18], p[19], (int)p[20],
                         PTR(const uint8_t *, p[21]), PTR(const uint8_t *, p[22]),
                         PTR(uint32_t *, p[23]), p[24], p[25], (int)p[26], &p[27]);
}
