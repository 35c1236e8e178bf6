CREATE TABLE `knowledge_content_pieces` (
	`content_id` text NOT NULL,
	`seq` integer NOT NULL,
	`bytes` blob NOT NULL,
	PRIMARY KEY(`content_id`, `seq`)
);
--> statement-breakpoint
ALTER TABLE `knowledge_files` ADD `content_id` text NOT NULL DEFAULT '';
--> statement-breakpoint
UPDATE `knowledge_files` SET `content_id` = `id`;
--> statement-breakpoint
CREATE INDEX `knowledge_files_content_idx` ON `knowledge_files` (`content_id`);
--> statement-breakpoint
INSERT INTO `knowledge_content_pieces` (`content_id`, `seq`, `bytes`) SELECT `file_id`, 0, `content` FROM `knowledge_file_blobs`;
--> statement-breakpoint
CREATE TRIGGER `knowledge_files_content_deleted` AFTER DELETE ON `knowledge_files` BEGIN
	DELETE FROM `knowledge_content_pieces` WHERE `content_id` = OLD.`content_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_files_content_replaced` AFTER UPDATE OF `content_id` ON `knowledge_files` WHEN OLD.`content_id` IS NOT NEW.`content_id` BEGIN
	DELETE FROM `knowledge_content_pieces` WHERE `content_id` = OLD.`content_id`;
END;
