-- Makes the roles of role_grants that are missing (when the current role
-- may create roles; else a warning says who must), pins the search_path
-- of every SECURITY DEFINER function of the tables' schema and takes it
-- from PUBLIC, takes CREATE on the schema from PUBLIC when the current
-- role owns it, then gives each existing role exactly its rows.  Run by
-- the owner only (not executable by anyone else); safe to run again.
CREATE OR REPLACE FUNCTION xqf_apply_grants() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema regnamespace := (SELECT relnamespace FROM pg_class WHERE oid = 'runs'::regclass);
    v_may_create boolean := (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user);
    v_role text;
    v_fn regprocedure;
    v_seq regclass;
    g role_grants%ROWTYPE;
BEGIN
    FOR v_role IN SELECT DISTINCT role FROM role_grants ORDER BY 1 LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role);
        IF v_may_create THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;   -- made meanwhile by the migration of another database of the cluster
            END;
        ELSE
            RAISE WARNING 'role % does not exist and % may not create roles: an administrator creates it '
                          '(CREATE ROLE % NOLOGIN), then xqf-coordinator --migrate grants it its privileges',
                          v_role, current_user, v_role;
        END IF;
    END LOOP;

    FOR v_fn IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = v_schema AND p.prosecdef LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %s, pg_temp', v_fn, v_schema);
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_fn);
    END LOOP;
    REVOKE ALL ON FUNCTION xqf_apply_grants() FROM PUBLIC;

    IF pg_has_role((SELECT nspowner FROM pg_namespace WHERE oid = v_schema), 'MEMBER') THEN
        EXECUTE format('REVOKE CREATE ON SCHEMA %s FROM PUBLIC', v_schema);
    END IF;

    FOR v_role IN SELECT DISTINCT r.role FROM role_grants r JOIN pg_roles p ON p.rolname = r.role ORDER BY 1 LOOP
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %s FROM %I', v_schema, v_role);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %s FROM %I', v_schema, v_role);
        EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA %s FROM %I', v_schema, v_role);
        EXECUTE format('GRANT USAGE ON SCHEMA %s TO %I', v_schema, v_role);
        IF has_schema_privilege(v_role, v_schema, 'CREATE') THEN
            RAISE WARNING 'role % may create objects in schema % (through PUBLIC): its owner should '
                          'REVOKE CREATE ON SCHEMA % FROM PUBLIC', v_role, v_schema, v_schema;
        END IF;
    END LOOP;

    FOR g IN SELECT r.* FROM role_grants r JOIN pg_roles p ON p.rolname = r.role ORDER BY r.role, r.kind, r.object LOOP
        IF g.kind = 'function' THEN
            FOR v_fn IN SELECT p.oid::regprocedure FROM pg_proc p
                         WHERE p.pronamespace = v_schema AND p.proname = g.object LOOP
                EXECUTE format('GRANT %s ON FUNCTION %s TO %I', g.privileges, v_fn, g.role);
            END LOOP;
        ELSIF g.kind = 'sequence' THEN
            EXECUTE format('GRANT %s ON SEQUENCE %s.%I TO %I', g.privileges, v_schema, g.object, g.role);
        ELSE
            EXECUTE format('GRANT %s ON TABLE %s.%I TO %I', g.privileges, v_schema, g.object, g.role);
            IF g.privileges ~* '\mINSERT\M' THEN
                FOR v_seq IN SELECT d.objid::regclass FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
                              WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                                AND d.refobjid = format('%s.%I', v_schema, g.object)::regclass
                                AND s.relkind = 'S' AND d.deptype IN ('a', 'i') LOOP
                    EXECUTE format('GRANT USAGE ON SEQUENCE %s TO %I', v_seq, g.role);
                END LOOP;
            END IF;
        END IF;
    END LOOP;
END $$;
