-- 058: the coordinator's /metrics (coordinator/metrics.h) counts the build
-- requests waiting for a builder (queued, building) at each scrape: it may
-- read them, never write them (the builder and the dashboard do).
INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_coordinator', 'table', 'build_requests', 'SELECT');

SELECT xqf_apply_grants();
