from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.measures import configured_measures
    from synthrisk.measures.policy import config_policy
    from synthrisk.report.summary import write_summary

    write_summary(configured_measures(snakemake.config), snakemake.input.status, snakemake.params.specs,
                  snakemake.params.tables, snakemake.params.figures,
                  config_policy(snakemake.config))
