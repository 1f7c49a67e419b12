-- 022: accounts can be disabled, and a changed password ends sessions.
--
-- A disabled account cannot sign in and its sessions end at once (the
-- session lookup skips it); deleting an account ends its sessions too
-- (web_sessions cascades).  xqf-tune user add --replace, which changes a
-- password, ends the account's sessions in the same statement (store_web.c):
-- whoever had the old password keeps nothing of it.
ALTER TABLE web_users ADD COLUMN disabled boolean NOT NULL DEFAULT false;
