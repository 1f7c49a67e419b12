/*
 * store_engines.h - engines as records (schemas/sql/migrations/032_engines.sql,
 * schemas/formats/engine_record.h): added, read, listed, changed with their
 * history.  Beyond the store's own contract (store.h), with the same
 * conventions (parameters passed separately, every result checked and
 * cleared, -1 on a database error after logging it).  The store's fourth
 * file that includes libpq-fe.h.
 *
 * The store keeps what it is given: the caller checks a record first
 * (engine_record_check); the database's own checks refuse the rest.
 */
#ifndef XQF_STORE_ENGINES_H
#define XQF_STORE_ENGINES_H

#include <stddef.h>
#include <stdint.h>

#include "engine_record.h"
#include "store.h"

/* Records e (its id and stamp ignored) as added by actor; *id its id. 1, 0 (its name is taken) or -1. */
int store_engine_add(Store *s, const EngineRecord *e, const char *actor, int64_t *id);
/* The engine named name into *e. 1, 0 (none) or -1. */
int store_engine_load(Store *s, const char *name, EngineRecord *e);
/*
 * The name of the engine the build of run's side ("test" or "base", a
 * build request's) is of (035_engine_runs.sql: "xqf", ours, for every run
 * made before; the base side's may be another, 041) into name (size
 * bytes).  1, 0 (no such run) or -1.  What the builder may read (runs,
 * not their tasks).
 */
int store_run_engine(Store *s, int64_t run, const char *side, char *name, size_t size);
/* Every engine, by id (ours first). Returns the count or -1; *out malloc'd (NULL when none). */
int store_engine_list(Store *s, EngineRecord **out);
/*
 * Writes e's settings (all of them) over the record named e->name, in one
 * transaction with its history: a row per field that changed, as actor's.
 * 1, 0 (no such engine) or -1.
 */
int store_engine_modify(Store *s, const EngineRecord *e, const char *actor);

/* One field changed (engine_history): who, when, from what to what ("" for none). */
typedef struct {
    char at[32];                     /* "YYYY-MM-DD HH:MM:SS" UTC */
    char actor[STORE_NAME_MAX + 1];
    char field[32];
    char old_value[ENGINE_TEXT_MAX * 2];
    char new_value[ENGINE_TEXT_MAX * 2];
} StoreEngineChange;

/* The history of the engine named name, oldest first (at most 1000). Returns the count or -1; *out malloc'd. */
int store_engine_history(Store *s, const char *name, StoreEngineChange **out);

/*
 * Presets (068_engine_presets.sql): named settings of new runs kept with an
 * engine, xqf-tune's options without "--" (key) and their values as text,
 * in the order given.  The store keeps what it is given: the caller
 * checks a preset first (run_presets.h).
 */
enum { STORE_PRESET_NAME_MAX = 32, STORE_PRESET_KEY_MAX = 31, STORE_PRESET_VALUE_MAX = 255, STORE_PRESETS_MAX = 32 };

typedef struct {
    char key[STORE_PRESET_KEY_MAX + 1];       /* "tc", "max-pairs" */
    char value[STORE_PRESET_VALUE_MAX + 1];   /* "10+0.1" */
} StorePresetSetting;

typedef struct {
    char engine[ENGINE_NAME_MAX + 1];
    char name[STORE_PRESET_NAME_MAX + 1];
    int count;
    StorePresetSetting settings[STORE_PRESETS_MAX];
    char updated_by[STORE_NAME_MAX + 1];
    char updated_at[32];                      /* "YYYY-MM-DD HH:MM:SS" UTC */
} StorePreset;

/*
 * The presets of the engine named engine (NULL: of every engine), by
 * engine id and name, each one's settings in key order (jsonb keeps no
 * other).  Returns the count or -1; *out malloc'd (NULL when none).
 */
int store_preset_list(Store *s, const char *engine, StorePreset **out);
/*
 * Writes p (its engine, name and settings) whole, made or replaced, as
 * actor's, with its line of the events log in the same statement
 * (xqf_engine_preset_set).  1, 0 (no such engine) or -1.
 */
int store_preset_set(Store *s, const StorePreset *p, const char *actor);
/* Removes the preset name of engine, with its line of the events log. 1, 0 (none such) or -1. */
int store_preset_remove(Store *s, const char *engine, const char *name, const char *actor);

#endif
