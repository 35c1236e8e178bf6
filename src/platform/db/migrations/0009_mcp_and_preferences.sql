CREATE TABLE `mcp_settings` (
	`product_id` text PRIMARY KEY NOT NULL,
	`disabled_tools` text NOT NULL,
	`default_top_k` integer DEFAULT 5 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `ai_preferences` (
	`user_id` text PRIMARY KEY NOT NULL,
	`language` text,
	`tone` text,
	`answer_length` text,
	`notes` text,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
