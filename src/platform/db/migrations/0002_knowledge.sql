CREATE TABLE `knowledge_bases` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`is_default` integer DEFAULT false NOT NULL,
	`embedding_model` text NOT NULL,
	`embedding_dim` integer NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `knowledge_bases_name_idx` ON `knowledge_bases` (`product_id`,`name`);--> statement-breakpoint
CREATE TABLE `knowledge_chunks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`file_id` text NOT NULL,
	`knowledge_base_id` text NOT NULL,
	`product_id` text NOT NULL,
	`ordinal` integer NOT NULL,
	`text` text NOT NULL,
	`page` integer,
	`headings` text NOT NULL,
	`char_start` integer NOT NULL,
	`char_end` integer NOT NULL,
	`tokens` integer NOT NULL,
	FOREIGN KEY (`file_id`) REFERENCES `knowledge_files`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_chunks_file_idx` ON `knowledge_chunks` (`file_id`,`ordinal`);--> statement-breakpoint
CREATE INDEX `knowledge_chunks_kb_idx` ON `knowledge_chunks` (`knowledge_base_id`);--> statement-breakpoint
CREATE TABLE `knowledge_file_blobs` (
	`file_id` text PRIMARY KEY NOT NULL,
	`content` blob NOT NULL,
	FOREIGN KEY (`file_id`) REFERENCES `knowledge_files`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `knowledge_files` (
	`id` text PRIMARY KEY NOT NULL,
	`knowledge_base_id` text NOT NULL,
	`product_id` text NOT NULL,
	`name` text NOT NULL,
	`format` text NOT NULL,
	`mime_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`status` text NOT NULL,
	`progress` real DEFAULT 0 NOT NULL,
	`error` text,
	`chunk_count` integer DEFAULT 0 NOT NULL,
	`embedding_model` text,
	`embedded_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`knowledge_base_id`) REFERENCES `knowledge_bases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `knowledge_files_sha_idx` ON `knowledge_files` (`knowledge_base_id`,`sha256`);--> statement-breakpoint
CREATE INDEX `knowledge_files_product_idx` ON `knowledge_files` (`product_id`);