CREATE TABLE `workflow_events` (
	`execution_id` text NOT NULL,
	`seq` integer NOT NULL,
	`event` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`execution_id`, `seq`),
	FOREIGN KEY (`execution_id`) REFERENCES `workflow_executions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `workflow_node_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`execution_id` text NOT NULL,
	`node_id` text NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`attempt` integer DEFAULT 0 NOT NULL,
	`output` text,
	`branch` text,
	`error` text,
	`wake_at` integer,
	`wait_kind` text,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`execution_id`) REFERENCES `workflow_executions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_node_runs_node_idx` ON `workflow_node_runs` (`execution_id`,`node_id`);--> statement-breakpoint
CREATE INDEX `workflow_node_runs_wake_idx` ON `workflow_node_runs` (`wake_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`trigger_id` text NOT NULL,
	`delivery_key` text,
	`event` text,
	`status` text NOT NULL,
	`execution_id` text,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`trigger_id`) REFERENCES `workflow_triggers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_key_idx` ON `webhook_deliveries` (`trigger_id`,`delivery_key`);--> statement-breakpoint
CREATE TABLE `workflow_executions` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`workflow_id` text,
	`version_id` text,
	`agent_id` text,
	`graph` text,
	`mode` text DEFAULT 'workflow' NOT NULL,
	`status` text NOT NULL,
	`trigger_type` text NOT NULL,
	`trigger_id` text,
	`trigger_node_id` text,
	`fire_key` text,
	`input` text NOT NULL,
	`output` text,
	`error` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`version_id`) REFERENCES `workflow_versions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workflow_executions_product_idx` ON `workflow_executions` (`product_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `workflow_executions_status_idx` ON `workflow_executions` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `workflow_executions_workflow_idx` ON `workflow_executions` (`workflow_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_executions_fire_idx` ON `workflow_executions` (`fire_key`);--> statement-breakpoint
CREATE TABLE `workflow_triggers` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`workflow_id` text NOT NULL,
	`version_id` text NOT NULL,
	`node_id` text NOT NULL,
	`type` text NOT NULL,
	`config` text NOT NULL,
	`webhook_path` text,
	`next_run_at` integer,
	`last_run_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_triggers_path_idx` ON `workflow_triggers` (`webhook_path`);--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_triggers_node_idx` ON `workflow_triggers` (`workflow_id`,`node_id`);--> statement-breakpoint
CREATE INDEX `workflow_triggers_due_idx` ON `workflow_triggers` (`type`,`next_run_at`);--> statement-breakpoint
CREATE TABLE `workflow_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`workflow_id` text NOT NULL,
	`version` integer NOT NULL,
	`graph` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_versions_number_idx` ON `workflow_versions` (`workflow_id`,`version`);--> statement-breakpoint
CREATE TABLE `workflows` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`active_version_id` text,
	`latest_version` integer DEFAULT 0 NOT NULL,
	`agent_id` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workflows_product_idx` ON `workflows` (`product_id`,`created_at`);