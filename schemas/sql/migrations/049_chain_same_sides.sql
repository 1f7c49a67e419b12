-- 049: a chain's SPRT with one engine on both sides ends before it plays
-- (schemas/sql/functions/xqf_chain_same_sides.sql).  The function's body
-- is that file, which the same migration run applies after the
-- migrations; the trigger needs a function to exist now.
CREATE FUNCTION xqf_chain_same_sides() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER runs_chain_same_sides AFTER INSERT OR UPDATE OF params0 ON runs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.kind = 'sprt' AND NEW.state = 'active' AND NEW.next_pair = 0)
    EXECUTE FUNCTION xqf_chain_same_sides();
