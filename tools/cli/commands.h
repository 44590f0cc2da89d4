#pragma once
// ember-cli subcommands. Each takes the arguments after its name and returns the exit status;
// errors are printed to stderr as one clear line.
#include <string>
#include <vector>

namespace ember::cli {

using Args = std::vector<std::string>;

int runInspect(const Args& args);         // cmd_inspect.cpp
int runTokenize(const Args& args);        // cmd_tokenize.cpp
int runDetokenize(const Args& args);      // cmd_tokenize.cpp
int runTokenizeBench(const Args& args);   // cmd_tokenize.cpp
int runRenderTemplate(const Args& args);  // cmd_render_template.cpp
int runGenerate(const Args& args);        // cmd_generate.cpp
int runChat(const Args& args);            // cmd_generate.cpp
int runLogits(const Args& args);          // cmd_logits.cpp
int runPlan(const Args& args);            // cmd_plan.cpp
int runSynthModel(const Args& args);      // cmd_synth_model.cpp
int runCutModel(const Args& args);        // cmd_cut_model.cpp
int runExport(const Args& args);          // cmd_export.cpp
int runImport(const Args& args);          // cmd_export.cpp
int runModels(const Args& args);          // cmd_remote.cpp

}  // namespace ember::cli
