-- Keyword index over chunk text and headings (FTS5, BM25), kept in step by triggers. The vector
-- tables depend on the embedding model's dimension and are created by the vector store.
CREATE VIRTUAL TABLE `knowledge_chunks_fts` USING fts5(
	`text`, `headings`,
	content='knowledge_chunks', content_rowid='id',
	tokenize='unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_insert` AFTER INSERT ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) VALUES (new.id, new.text, new.headings);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_delete` AFTER DELETE ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_chunks_fts`(`knowledge_chunks_fts`, rowid, `text`, `headings`) VALUES ('delete', old.id, old.text, old.headings);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_update` AFTER UPDATE ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_chunks_fts`(`knowledge_chunks_fts`, rowid, `text`, `headings`) VALUES ('delete', old.id, old.text, old.headings);
	INSERT INTO `knowledge_chunks_fts`(rowid, `text`, `headings`) VALUES (new.id, new.text, new.headings);
END;
