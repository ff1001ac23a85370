from synthrisk.study.workflow import logged, write_summary

with logged(snakemake):
    from synthrisk.measures import configured_measures

    measure = configured_measures(snakemake.config)[snakemake.params.measure]
    write_summary(measure, list(snakemake.params.runs), snakemake.params.tables, snakemake.params.figures,
                  measure.settings(snakemake.config.get(measure.name)))
