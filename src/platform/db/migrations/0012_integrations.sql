CREATE TABLE `integrations` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`product_id` text,
	`title` text NOT NULL,
	`type` text NOT NULL,
	`scope` text NOT NULL,
	`status` text NOT NULL,
	`config` text NOT NULL,
	`credentials` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `integrations_org_idx` ON `integrations` (`organization_id`,`type`);--> statement-breakpoint
CREATE INDEX `integrations_product_idx` ON `integrations` (`product_id`);