#include "texel.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_THREADS = 64 };

static inline double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* One thread's share: positions lo .. hi - 1; with grad, the gradient's partial sums too. */
typedef struct {
    const xqf_texel_data *d;
    const double *theta;
    double K, lambda;
    size_t lo, hi;
    double loss;
    double *grad;              /* k, or NULL */
} Slice;

static void *slice_run(void *arg)
{
    Slice *s = arg;
    const xqf_texel_data *d = s->d;
    double loss = 0;
    for (size_t i = s->lo; i < s->hi; i++) {
        double e = d->fixed[i];
        for (uint32_t t = d->start[i]; t < d->start[i + 1]; t++)
            e += d->coef[t] * s->theta[d->index[t]];
        double target = s->lambda * d->result[i] + (1 - s->lambda) * sigmoid(s->K * d->score[i]);
        double p = sigmoid(s->K * e), diff = p - target;
        loss += diff * diff;
        if (s->grad) {
            double g = 2 * diff * p * (1 - p) * s->K;
            for (uint32_t t = d->start[i]; t < d->start[i + 1]; t++)
                s->grad[d->index[t]] += g * d->coef[t];
        }
    }
    s->loss = loss;
    return NULL;
}

/* The loss (and, with grad, its gradient) over every position. Returns -1 when a thread failed. */
static int evaluate_all(const xqf_texel_data *d, const double *theta, double K, double lambda, int threads,
                        double *loss, double *grad)
{
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((size_t)threads > d->n / 1024 + 1)
        threads = (int)(d->n / 1024 + 1);
    Slice slices[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    double *partial = grad ? calloc((size_t)threads * (d->k ? d->k : 1), sizeof *partial) : NULL;
    if (grad && !partial)
        return -1;
    bool started[MAX_THREADS] = { false };
    int rc = 0;
    for (int t = 0; t < threads; t++) {
        slices[t] = (Slice){ d, theta, K, lambda, d->n * (size_t)t / (size_t)threads,
                             d->n * (size_t)(t + 1) / (size_t)threads, 0, grad ? partial + (size_t)t * d->k : NULL };
        /* The last share, and one whose thread could not start, run here. */
        started[t] = t < threads - 1 && pthread_create(&tid[t], NULL, slice_run, &slices[t]) == 0;
        if (!started[t])
            slice_run(&slices[t]);
    }
    for (int t = 0; t < threads; t++)
        if (started[t] && pthread_join(tid[t], NULL) != 0)
            rc = -1;
    double sum = 0;
    for (int t = 0; t < threads; t++)
        sum += slices[t].loss;
    *loss = d->n ? sum / (double)d->n : 0;
    if (grad) {
        memset(grad, 0, d->k * sizeof *grad);
        for (int t = 0; t < threads; t++)
            for (size_t j = 0; j < d->k; j++)
                grad[j] += partial[(size_t)t * d->k + j] / (double)(d->n ? d->n : 1);
        free(partial);
    }
    return rc;
}

double xqf_texel_loss(const xqf_texel_data *d, const double *theta, double K, double lambda, int threads)
{
    double loss;
    return evaluate_all(d, theta, K, lambda, threads, &loss, NULL) == 0 ? loss : NAN;
}

double xqf_texel_fit_k(const xqf_texel_data *d, const double *theta, int threads)
{
    const double phi = (sqrt(5.0) - 1) / 2;
    double a = 1e-4, b = 0.05;
    double c = b - phi * (b - a), e = a + phi * (b - a);
    double fc = xqf_texel_loss(d, theta, c, 1, threads), fe = xqf_texel_loss(d, theta, e, 1, threads);
    for (int it = 0; it < 60 && b - a > 1e-7; it++) {
        if (fc < fe) {
            b = e, e = c, fe = fc;
            c = b - phi * (b - a);
            fc = xqf_texel_loss(d, theta, c, 1, threads);
        } else {
            a = c, c = e, fc = fe;
            e = a + phi * (b - a);
            fe = xqf_texel_loss(d, theta, e, 1, threads);
        }
    }
    return (a + b) / 2;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int xqf_texel_fit(const xqf_texel_data *d, const xqf_texel_config *cfg, double *theta, double *curve)
{
    const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    size_t k = d->k ? d->k : 1;
    double *grad = calloc(k, sizeof *grad), *m = calloc(k, sizeof *m), *v = calloc(k, sizeof *v);
    int rc = grad && m && v ? 0 : -1;
    double loss = 0;
    if (rc == 0)
        rc = evaluate_all(d, theta, cfg->K, cfg->lambda, cfg->threads, &loss, grad);
    if (curve && rc == 0)
        curve[0] = loss;
    for (int epoch = 1; epoch <= cfg->epochs && rc == 0; epoch++) {
        double t0 = now_s(), change = 0;
        double c1 = 1 - pow(beta1, epoch), c2 = 1 - pow(beta2, epoch);
        for (size_t j = 0; j < d->k; j++) {
            m[j] = beta1 * m[j] + (1 - beta1) * grad[j];
            v[j] = beta2 * v[j] + (1 - beta2) * grad[j] * grad[j];
            double step = cfg->rate * (m[j] / c1) / (sqrt(v[j] / c2) + eps);
            double next = theta[j] - step;
            if (cfg->lo && next < cfg->lo[j])
                next = cfg->lo[j];
            if (cfg->hi && next > cfg->hi[j])
                next = cfg->hi[j];
            change = fmax(change, fabs(next - theta[j]));
            theta[j] = next;
        }
        rc = evaluate_all(d, theta, cfg->K, cfg->lambda, cfg->threads, &loss, grad);
        if (curve && rc == 0)
            curve[epoch] = loss;
        double dt = now_s() - t0;
        if (cfg->progress && rc == 0)
            cfg->progress(cfg->ctx, epoch, loss, change, dt > 0 ? (double)d->n / dt : 0);
    }
    free(grad);
    free(m);
    free(v);
    return rc;
}
