-- Before version 7 the intent was implicit: a reserved row may have sent
-- its accept, and an accepted or drafted row with a push time but no
-- acknowledged hash had sent a push whose answer was not recorded.
UPDATE `{{prefix}}requests`
SET intent = CASE
    WHEN phase = 'reserved' THEN 'accept'
    WHEN phase IN ('accepted', 'drafted') AND pushed_hash = '' AND pushed_at IS NOT NULL THEN 'push'
    ELSE '' END
WHERE intent = ''
