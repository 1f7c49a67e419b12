-- 049: a chain moves on at commit.  runs_chain (015) was an immediate
-- trigger: the next stage's SPRT was made from an SPSA run's theta before
-- the run's last update, which the coordinator applies after the report
-- that ended the run, in the same transaction (xqf_chain_theta then
-- carried it over).  Deferred to the commit, xqf_chain_start sees the
-- final theta when it makes the SPRT, so it can also tell an SPRT with
-- nothing to test (one engine on both sides) and end it before it plays
-- (schemas/sql/functions/xqf_chain_start.sql).
DROP TRIGGER runs_chain ON runs;
CREATE CONSTRAINT TRIGGER runs_chain AFTER UPDATE OF state ON runs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.state IN ('finished', 'stopped') AND OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION xqf_chain_run_ended();
