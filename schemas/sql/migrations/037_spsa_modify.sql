-- 037: an admin changes a running SPSA tune: its parameters' bounds and end
-- hints (c_end, r_end) and its schedule (alpha, gamma, a_ratio), as
-- Fishtest lets an approver edit a test's SPSA settings.  Each change is
-- one row of the run's history (web_audit, as xqf_modify_run writes).
--
-- The next task's perturbation is drawn from the new settings (the
-- scheduler reads them for each task); a task already given out keeps its
-- c_k and R_k, and its update is clipped to the new bounds.  A theta
-- outside new bounds is moved to the nearer one.  Parameters are neither
-- added nor removed: their order is every task's perturbation's order.
-- The function is schemas/functions/xqf_modify_spsa.sql (applied after the
-- migrations); this migration grants it.

INSERT INTO role_grants (role, kind, object, privileges) VALUES ('xqf_web', 'function', 'xqf_modify_spsa', 'EXECUTE');
SELECT xqf_apply_grants();
