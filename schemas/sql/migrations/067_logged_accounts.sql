-- 067: an account's creation writes its line of the events log itself
-- (xqf_user_add takes who made it: the dashboard's admin or xqf-tune's
-- operator), in the same transaction, from either front end.
DROP FUNCTION IF EXISTS xqf_user_add(text, text, text);
