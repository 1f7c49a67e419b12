#include "spsa.h"

#include <math.h>
#include <string.h>

int xqf_spsa_init(xqf_spsa *s, int64_t iterations)
{
    if (iterations < 1)
        return -1;
    memset(s, 0, sizeof *s);
    s->iterations = iterations;
    s->alpha = 0.602;
    s->gamma = 0.101;
    s->A = 0.1 * (double)iterations;
    return 0;
}

int xqf_spsa_add(xqf_spsa *s, const char *name, double theta, double min, double max,
                 double c_end, double r_end)
{
    size_t len = strlen(name);
    if (s->count >= XQF_SPSA_MAX_PARAMS || len == 0 || len >= XQF_SPSA_NAME)
        return -1;
    if (!(min < max) || !(theta >= min && theta <= max) || !(c_end > 0) || !(r_end > 0))
        return -1;
    xqf_spsa_param *p = &s->params[s->count++];
    memcpy(p->name, name, len + 1);
    p->theta = theta;
    p->min = min;
    p->max = max;
    p->c_end = c_end;
    p->r_end = r_end;
    p->is_float = false;
    return 0;
}

double xqf_spsa_c(const xqf_spsa *s, int i, int64_t k)
{
    double c = s->params[i].c_end * pow((double)s->iterations, s->gamma);
    return c / pow((double)k, s->gamma);
}

double xqf_spsa_r(const xqf_spsa *s, int i, int64_t k)
{
    const xqf_spsa_param *p = &s->params[i];
    double a = p->r_end * p->c_end * p->c_end * pow(s->A + (double)s->iterations, s->alpha);
    double c_k = xqf_spsa_c(s, i, k);
    return a / pow(s->A + (double)k, s->alpha) / (c_k * c_k);
}

double xqf_spsa_random(uint64_t *rng)
{
    uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) * 0x1.0p-53;
}

static double clip(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Stochastic rounding: floor(v) or floor(v) + 1 with the fractional part
 * as the chance (a float parameter keeps v; the draw is made either way,
 * so that a parameter's type does not shift the others' draws).
 */
static double round_randomly(double v, bool is_float, uint64_t *rng)
{
    double f = floor(v);
    bool up = xqf_spsa_random(rng) < v - f;
    return is_float ? v : f + up;
}

void xqf_spsa_perturb(const xqf_spsa *s, int64_t k, uint64_t *rng, xqf_spsa_step *out)
{
    if (k < 1)
        k = 1;
    out->count = s->count;
    out->k = k;
    for (int i = 0; i < s->count; i++) {
        const xqf_spsa_param *p = &s->params[i];
        out->flip[i] = xqf_spsa_random(rng) < 0.5 ? -1 : 1;
        out->c_k[i] = xqf_spsa_c(s, i, k);
        out->R_k[i] = xqf_spsa_r(s, i, k);
        double delta = out->c_k[i] * out->flip[i];
        out->plus[i] = round_randomly(clip(p->theta + delta, p->min, p->max), p->is_float, rng);
        out->minus[i] = round_randomly(clip(p->theta - delta, p->min, p->max), p->is_float, rng);
    }
}

int xqf_spsa_update(xqf_spsa *s, const xqf_spsa_step *step, int64_t pairs, int64_t wins,
                    int64_t losses)
{
    if (step->count != s->count || pairs < 0)
        return -1;
    double result = (double)(wins - losses);
    for (int i = 0; i < s->count; i++) {
        xqf_spsa_param *p = &s->params[i];
        p->theta = clip(p->theta + step->R_k[i] * step->c_k[i] * result * step->flip[i], p->min, p->max);
    }
    s->iter += pairs;
    return 0;
}
