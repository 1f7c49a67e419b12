-- Changes a run that has not ended (NULL: leave as is): its priority,
-- throughput share, pair cap (SPSA: its iterations), or (SPSA) extends its
-- iterations by p_extend.  All or nothing, recorded in web_audit (011)
-- under p_actor.  Returns '' when done, else why nothing was changed.  A
-- cap lowered to the pairs already given out ends the run once they are
-- played; when they are, at once (verdict "max pairs").
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_modify_run(p_run bigint, p_actor text, p_priority integer, p_throughput integer,
                                          p_max_pairs bigint, p_extend bigint)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    r runs%ROWTYPE;
    cap bigint;
    what text := '';
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN format('no run %s', p_run);
    END IF;
    IF r.state IN ('finished', 'stopped') THEN
        RETURN format('run %s is %s: only a run that has not ended can be changed', p_run, r.state);
    END IF;
    IF p_throughput IS NOT NULL AND p_throughput NOT BETWEEN 1 AND 1000 THEN
        RETURN format('throughput %s%% is outside 1-1000', p_throughput);
    END IF;
    IF p_extend IS NOT NULL AND r.kind <> 'spsa' THEN
        RETURN format('run %s (%s) is not an SPSA run: only SPSA runs are extended (give --max-pairs)', p_run, r.kind);
    END IF;
    IF p_extend IS NOT NULL AND p_extend < 1 THEN
        RETURN 'the extension must be at least one pair';
    END IF;
    IF p_max_pairs IS NOT NULL AND p_extend IS NOT NULL THEN
        RETURN 'give a new cap or an extension, not both';
    END IF;
    cap := coalesce(p_max_pairs, r.max_pairs + p_extend, r.max_pairs);
    IF cap < 1 THEN
        RETURN format('max pairs %s must be at least 1', cap);
    END IF;
    IF cap < r.next_pair THEN
        RETURN format('max pairs %s is below the %s pairs already given out (%s played)', cap, r.next_pair, r.pairs);
    END IF;
    IF p_priority IS NOT NULL AND p_priority <> r.priority THEN
        what := what || format(', priority %s -> %s', r.priority, p_priority);
    END IF;
    IF p_throughput IS NOT NULL AND p_throughput <> r.throughput THEN
        what := what || format(', throughput %s%% -> %s%%', r.throughput, p_throughput);
    END IF;
    IF cap <> r.max_pairs THEN
        what := what || format(', max pairs %s -> %s', r.max_pairs, cap);
    END IF;
    IF what = '' THEN
        RETURN 'nothing to change';
    END IF;
    UPDATE runs SET priority = coalesce(p_priority, priority), throughput = coalesce(p_throughput, throughput),
                    max_pairs = cap
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'modify', substr(what, 3));
    IF r.state = 'active' AND r.next_pair >= cap
       AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = p_run AND t.state IN ('queued', 'leased')) THEN
        PERFORM xqf_finish_run(p_run, 'finished', 'max pairs', NULL);
    END IF;
    RETURN '';
END $$;
