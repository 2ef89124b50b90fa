# Renumbering (order/): Reverse Cuthill-McKee and the symmetric permutation
krill_test(test_order test_order.c LABELS unit)

# `krill solve --reorder` (label cli; tests/cli/reorder.sh)
foreach(spec poisson3d:8 convdiff3d:8 elasticity3d:6,3,3)
  string(REGEX REPLACE "[:,]" "_" name ${spec})
  add_test(NAME cli_reorder_${name} COMMAND bash ${KRILL_CLI_DIR}/reorder.sh
           $<TARGET_FILE:krill_cli> solution ${spec} 1e-6)
  set_tests_properties(cli_reorder_${name} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endforeach()
add_test(NAME cli_reorder_json COMMAND bash ${KRILL_CLI_DIR}/reorder.sh
         $<TARGET_FILE:krill_cli> json)
set_tests_properties(cli_reorder_json PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                     ENVIRONMENT "${KRILL_CLI_ENV}")
krill_cli_case(reorder_default 0 "reorder none: half bandwidth 16$" "" solve --gen poisson3d:4)
krill_cli_case(reorder_bad_choice 2 "" "--reorder.*none, rcm" solve --gen poisson3d:4
               --reorder bogus)
