"""The study tooling around the library: the workflow's config checks and script support
(`config`, `workflow`), the SLURM resources (`resources`), the verdicts' calibration study
(`calibration`), the published findings and the reproducibility bundle (`findings`, `bundle`,
`artifact`) and the generated configuration reference (`config_reference`). The library (methods,
measures, the audit and its report) never imports from here."""
