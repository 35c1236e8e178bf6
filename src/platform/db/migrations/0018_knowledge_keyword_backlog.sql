-- Chunks with CJK text no longer go through the keyword index twice: in 0017 the triggers indexed
-- every chunk's text as it is and the keyword store then replaced a CJK chunk's row by its pairs
-- of characters, a delete per chunk, and deletes from a contentless FTS5 index rewrite its segments
-- (indexing 100k older CJK chunks again took 82 s, one commit 1.4 s). Now the triggers index only
-- chunks without a character of the Hangul Jamo, kana-to-Han (U+3041-9FFF) or Hangul syllable
-- blocks, and list the others in knowledge_keyword_backlog, which the keyword store (keyword-store.ts)
-- empties: at once for the chunks an ingestion writes, a slice per commit after the start for
-- those stored before (each of them is found once its slice is done). A chunk is in the index or
-- in the backlog, never both.
DROP TRIGGER `knowledge_chunks_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `knowledge_chunks_fts_delete`;
--> statement-breakpoint
DROP TRIGGER `knowledge_chunks_fts_update`;
--> statement-breakpoint
DROP TABLE `knowledge_keyword_reindex`;
--> statement-breakpoint
CREATE TABLE `knowledge_keyword_backlog` (
	`chunk_id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
INSERT INTO `knowledge_keyword_backlog` (`chunk_id`)
	SELECT `id` FROM `knowledge_chunks` WHERE `text` GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*' OR `headings` GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*';
--> statement-breakpoint
DELETE FROM `knowledge_chunks_fts` WHERE rowid IN (SELECT `chunk_id` FROM `knowledge_keyword_backlog`);
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_insert` AFTER INSERT ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_keyword_backlog` (`chunk_id`) SELECT new.id
		WHERE new.text GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*' OR new.headings GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*';
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) SELECT new.id, new.text, new.headings
		WHERE NOT EXISTS (SELECT 1 FROM `knowledge_keyword_backlog` WHERE `chunk_id` = new.id);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_delete` AFTER DELETE ON `knowledge_chunks` BEGIN
	DELETE FROM `knowledge_chunks_fts` WHERE rowid = old.id;
	DELETE FROM `knowledge_keyword_backlog` WHERE `chunk_id` = old.id;
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_update` AFTER UPDATE OF `text`, `headings` ON `knowledge_chunks` BEGIN
	DELETE FROM `knowledge_chunks_fts` WHERE rowid = old.id;
	DELETE FROM `knowledge_keyword_backlog` WHERE `chunk_id` = old.id;
	INSERT INTO `knowledge_keyword_backlog` (`chunk_id`) SELECT new.id
		WHERE new.text GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*' OR new.headings GLOB '*[ᄀ-ᇿぁ-鿿가-힣]*';
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) SELECT new.id, new.text, new.headings
		WHERE NOT EXISTS (SELECT 1 FROM `knowledge_keyword_backlog` WHERE `chunk_id` = new.id);
END;
