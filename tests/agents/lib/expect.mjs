// What every agent test expects: the tools Vaider offers, and no warning in a CLI's output.

/** Every tool of Vaider, as `tools/list` gives them (23). */
export const VAIDER_TOOLS = [
  'analyse_test_results', 'analyze_data_visualization', 'analyze_image', 'analyze_video',
  'diagnose_error_screenshot', 'extract_text_from_screenshot', 'generate_test_plan',
  'get_test_run', 'list_test_plans', 'list_test_runs', 'review_approve', 'review_pending',
  'review_reject', 'run_test_plan', 'ui_diff_check',
  'ui_to_artifact', 'understand_technical_diagram', 'vaider_status', 'validate_test',
  'visual_capture', 'visual_cleanup', 'visual_compare', 'visual_prepare',
];

/**
 * The lines of a CLI's output that warn or report an error about MCP, Vaider or a tool.
 * (Complaints about the stand-in model or the missing network are the test's, not Vaider's.)
 */
export function warnings(output) {
  return output.split('\n')
    .filter((line) => /warn|error|fail|invalid|refus|drop/i.test(line))
    .filter((line) => /mcp|vaider|rmcp|tool|schema|server/i.test(line))
    .filter((line) => !/curated plugin/i.test(line));
}
