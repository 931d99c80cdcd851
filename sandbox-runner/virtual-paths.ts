/** The virtual paths live with the workspace (the runner's bottom layer); re-exported for the harness's imports. */
export * from './workspace/virtual-paths.ts';
