// Where tests find the real models: HEARTH_MODELS_DIR when set (CI sets it), else ../shared/models
// beside the project, so that `npm test` as the README writes it finds them too.
import { join } from "node:path";

export const TEST_MODELS_DIR = process.env.HEARTH_MODELS_DIR ?? join(import.meta.dir, "../../../shared/models");
