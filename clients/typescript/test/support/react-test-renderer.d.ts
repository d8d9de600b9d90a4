/** The part of react-test-renderer the tests use (it ships no types of its own). */
declare module "react-test-renderer" {
  import type { ReactElement } from "react";

  export interface ReactTestRenderer {
    unmount(): void;
  }

  export function create(element: ReactElement): ReactTestRenderer;
}
