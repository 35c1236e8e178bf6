-- The keyword index made contentless (a row is deleted by its rowid alone), so that a chunk's row
-- may hold other tokens than its text: the keyword store (keyword-store.ts) indexes chunks with
-- CJK text again as pairs of characters, which SQL cannot compute. The triggers index every chunk's
-- text as it is, as before. knowledge_keyword_reindex holds the range of chunks stored before this
-- migration that the store has still to look at (ids above done_through, up to up_to); it empties
-- it a slice at a time after the start, and deletes the row when done.
DROP TRIGGER `knowledge_chunks_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `knowledge_chunks_fts_delete`;
--> statement-breakpoint
DROP TRIGGER `knowledge_chunks_fts_update`;
--> statement-breakpoint
DROP TABLE `knowledge_chunks_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `knowledge_chunks_fts` USING fts5(
	`text`, `headings`,
	content='', contentless_delete=1,
	tokenize='unicode61 remove_diacritics 2'
);
--> statement-breakpoint
INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) SELECT `id`, `text`, `headings` FROM `knowledge_chunks`;
--> statement-breakpoint
CREATE TABLE `knowledge_keyword_reindex` (
	`done_through` integer NOT NULL,
	`up_to` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `knowledge_keyword_reindex` (`done_through`, `up_to`) SELECT 0, `id` FROM `knowledge_chunks` ORDER BY `id` DESC LIMIT 1;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_insert` AFTER INSERT ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) VALUES (new.id, new.text, new.headings);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_delete` AFTER DELETE ON `knowledge_chunks` BEGIN
	DELETE FROM `knowledge_chunks_fts` WHERE rowid = old.id;
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_update` AFTER UPDATE OF `text`, `headings` ON `knowledge_chunks` BEGIN
	DELETE FROM `knowledge_chunks_fts` WHERE rowid = old.id;
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) VALUES (new.id, new.text, new.headings);
END;
