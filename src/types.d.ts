// Module shapes for files Bun imports as text (migrations) or as embedded file paths.
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/*.js" {
  const path: string;
  export default path;
}
