-- Hand-written (drizzle-kit's rebuild cannot derive session_key and would cascade-delete messages
-- when the parent table is dropped inside the migration's transaction, where PRAGMA foreign_keys
-- is a no-op): sessions first, then messages joined to their session's new key, then drop the
-- child before the parent. Existing sessions get no owner (owners, admins and SYSTEM tokens see them).
CREATE TABLE `__new_chat_sessions` (
	`key` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`product_id` text NOT NULL,
	`owner_kind` text,
	`owner_id` text,
	`title` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_chat_sessions`("id", "product_id", "owner_kind", "owner_id", "title", "created_at", "updated_at") SELECT "id", "product_id", NULL, NULL, "title", "created_at", "updated_at" FROM `chat_sessions` ORDER BY "created_at", "id";--> statement-breakpoint
CREATE TABLE `__new_chat_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_key` integer NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`status` text DEFAULT 'complete' NOT NULL,
	`sources` text,
	`metadata` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`session_key`) REFERENCES `__new_chat_sessions`(`key`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_chat_messages`("id", "session_key", "role", "content", "status", "sources", "metadata", "created_at") SELECT m."id", s."key", m."role", m."content", m."status", m."sources", m."metadata", m."created_at" FROM `chat_messages` AS m JOIN `__new_chat_sessions` AS s ON s."id" = m."session_id";--> statement-breakpoint
DROP TABLE `chat_messages`;--> statement-breakpoint
DROP TABLE `chat_sessions`;--> statement-breakpoint
ALTER TABLE `__new_chat_sessions` RENAME TO `chat_sessions`;--> statement-breakpoint
ALTER TABLE `__new_chat_messages` RENAME TO `chat_messages`;--> statement-breakpoint
CREATE INDEX `chat_messages_session_idx` ON `chat_messages` (`session_key`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `chat_sessions_id_product_idx` ON `chat_sessions` (`id`,`product_id`);--> statement-breakpoint
CREATE INDEX `chat_sessions_product_idx` ON `chat_sessions` (`product_id`,`updated_at`);--> statement-breakpoint
ALTER TABLE `api_token_audit_logs` ADD `count` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `deleted_at` integer;
