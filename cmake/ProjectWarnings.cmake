# Project code builds with -Wall -Wextra and must stay warning-free.
# GRAPHWORLD_WERROR=ON turns warnings into errors (CI uses it).
option(GRAPHWORLD_WERROR "Treat warnings in project code as errors" OFF)

function(graphworld_warnings target)
  # -Wno-restrict: GCC 12 reports false positives inside std::string
  # concatenation at -O2 and above (GCC bug 105329).
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-restrict>)
  if(GRAPHWORLD_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
