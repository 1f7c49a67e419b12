-- 026: engine builds with a net compiled in as their default evaluation
-- (xqf-tune build --net: cmake -DXQF_DEFAULT_NET).

-- The net an engine build has compiled in, its provenance; NULL: none (or
-- not known: the tree's own engine/nets/default.nnue).  A tree built with
-- one net is not the build of that tree with another.
ALTER TABLE engine_builds ADD COLUMN net_id bigint REFERENCES nets(id);
