-- ---- a signature covers the SHA-256 and the name --------------------------
--
-- Registering a build (store_add_build) no longer writes its signature in
-- the same statement (the builder may register builds but not sign them:
-- it has no privilege on the column); signing is a statement of its own.
-- A build registered again under another name loses a signature made for
-- the old name, whoever registers it.
CREATE OR REPLACE FUNCTION xqf_build_renamed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.build_id IS DISTINCT FROM OLD.build_id AND NEW.signature IS NOT DISTINCT FROM OLD.signature THEN
        NEW.signature := NULL;
    END IF;
    RETURN NEW;
END $$;
