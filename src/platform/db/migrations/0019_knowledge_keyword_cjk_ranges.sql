-- 0018's triggers listed chunks for the pair form by a character class narrower than the one the
-- keyword store (keyword-text.ts) and its queries count as CJK: half-width katakana (ﾃﾞｰﾀﾍﾞｰｽ, common
-- in Shift-JIS exports), compatibility and extension-B ideographs and half-width Hangul were indexed
-- as they are but looked up as pairs, so never found (upgrade probe r3). The class now spans those
-- blocks and more; a chunk listed that has no CJK character is indexed by the store as it is, so a
-- wider class costs only a slice of background work. Chunks the wider class adds are moved to the
-- backlog: out of the index (only those: deletes from the contentless index are slow), then indexed
-- again by the store a slice per commit after the start.
CREATE TEMP TABLE `keyword_newly_listed` AS SELECT `id` FROM `knowledge_chunks`
	WHERE (`text` GLOB '*[ᄀ-ᇿ⺀-鿿ꥠ-꥿가-퟿豈-﫿＀-￯𠀀-𿿽]*' OR `headings` GLOB '*[ᄀ-ᇿ⺀-鿿ꥠ-꥿가-퟿豈-﫿＀-￯𠀀-𿿽]*')
		AND NOT (`text` GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*' OR `headings` GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*')
		AND `id` NOT IN (SELECT `chunk_id` FROM `knowledge_keyword_backlog`);
--> statement-breakpoint
INSERT INTO `knowledge_keyword_backlog` (`chunk_id`) SELECT `id` FROM `keyword_newly_listed`;
--> statement-breakpoint
DELETE FROM `knowledge_chunks_fts` WHERE rowid IN (SELECT `id` FROM `keyword_newly_listed`);
--> statement-breakpoint
DROP TABLE `keyword_newly_listed`;
--> statement-breakpoint
DROP TRIGGER `knowledge_chunks_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `knowledge_chunks_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_insert` AFTER INSERT ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_keyword_backlog` (`chunk_id`) SELECT new.id
		WHERE new.text GLOB '*[ᄀ-ᇿ⺀-鿿ꥠ-꥿가-퟿豈-﫿＀-￯𠀀-𿿽]*' OR new.headings GLOB '*[ᄀ-ᇿ⺀-鿿ꥠ-꥿가-퟿豈-﫿＀-￯𠀀-𿿽]*';
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) SELECT new.id, new.text, new.headings
		WHERE NOT EXISTS (SELECT 1 FROM `knowledge_keyword_backlog` WHERE `chunk_id` = new.id);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_update` AFTER UPDATE OF `text`, `headings` ON `knowledge_chunks` BEGIN
	DELETE FROM `knowledge_chunks_fts` WHERE rowid = old.id;
	DELETE FROM `knowledge_keyword_backlog` WHERE `chunk_id` = old.id;
	INSERT INTO `knowledge_keyword_backlog` (`chunk_id`) SELECT new.id
		WHERE new.text GLOB '*[ᄀ-ᇿ⺀-鿿ꥠ-꥿가-퟿豈-﫿＀-￯𠀀-𿿽]*' OR new.headings GLOB '*[ᄀ-ᇿ⺀-鿿ꥠ-꥿가-퟿豈-﫿＀-￯𠀀-𿿽]*';
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) SELECT new.id, new.text, new.headings
		WHERE NOT EXISTS (SELECT 1 FROM `knowledge_keyword_backlog` WHERE `chunk_id` = new.id);
END;
