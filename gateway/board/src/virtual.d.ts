/** The app's URL (vite.config.ts): its built file, or its source under the dev server. */
declare module "virtual:board-app" {
  const url: string;
  export default url;
  /** Whether the app has modules of its own (built), or shares the page's (dev server). */
  export const separate: boolean;
}
