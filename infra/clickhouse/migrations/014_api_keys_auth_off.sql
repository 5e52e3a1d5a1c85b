-- Keys made while AUTH_MODE=off were made by anyone who could reach the port: they are marked, and
-- refused with AUTH_MODE=on until re-issued. Rows stored before the column existed are marked by
-- their creator (`anonymous` is the caller of AUTH_MODE=off), computed on read.
ALTER TABLE {{database}}.api_keys ADD COLUMN IF NOT EXISTS created_while_auth_off Bool DEFAULT created_by = 'anonymous' AFTER created_by;
