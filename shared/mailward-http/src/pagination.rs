//! `page` / `per_page` and `page_info` (SPEC §4 common rules). Pages are 1-based; `per_page`
//! defaults to 25 and may be 1 to 100.

use crate::error::ApiError;
use crate::views::PageInfo;
use serde::Deserialize;
use utoipa::IntoParams;

/// Default page size.
pub const DEFAULT_PER_PAGE: u32 = 25;
/// Largest page number.
pub const MAX_PAGE: u32 = 1_000_000;
/// Largest page size.
pub const MAX_PER_PAGE: u32 = 100;

/// Pagination query parameters.
#[derive(Debug, Clone, Copy, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// 1-based page number (default 1, at most 1,000,000).
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Items per page (default 25, 1 to 100).
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

impl PageParams {
    /// Validated (page, per_page).
    pub fn resolve(self) -> Result<(u32, u32), ApiError> {
        let page = self.page.unwrap_or(1);
        if page == 0 || page > MAX_PAGE {
            return Err(ApiError::invalid_param(
                "page",
                "page must be between 1 and 1000000",
            ));
        }
        let per_page = self.per_page.unwrap_or(DEFAULT_PER_PAGE);
        if per_page == 0 || per_page > MAX_PER_PAGE {
            return Err(ApiError::invalid_param(
                "per_page",
                "per_page must be between 1 and 100",
            ));
        }
        Ok((page, per_page))
    }

    /// Cuts one page out of the full, already sorted list.
    pub fn paginate<T>(self, items: Vec<T>) -> Result<(Vec<T>, PageInfo), ApiError> {
        let (page, per_page) = self.resolve()?;
        let total = items.len();
        let start =
            usize::try_from(u64::from(page - 1) * u64::from(per_page)).unwrap_or(usize::MAX);
        let page_items: Vec<T> = items
            .into_iter()
            .skip(start)
            .take(per_page as usize)
            .collect();
        let has_more = start.saturating_add(page_items.len()) < total;
        Ok((
            page_items,
            PageInfo {
                total_count: total as u64,
                page,
                per_page,
                has_more,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_cut_and_described() {
        let p = PageParams {
            page: Some(2),
            per_page: Some(2),
        };
        let (items, info) = p.paginate(vec![1, 2, 3, 4, 5]).unwrap();
        assert_eq!(items, [3, 4]);
        assert_eq!(
            info,
            PageInfo {
                total_count: 5,
                page: 2,
                per_page: 2,
                has_more: true
            }
        );
        let (items, info) = PageParams {
            page: Some(3),
            per_page: Some(2),
        }
        .paginate(vec![1, 2, 3, 4, 5])
        .unwrap();
        assert_eq!((items, info.has_more), (vec![5], false));
        let (items, _) = PageParams {
            page: Some(9),
            per_page: None,
        }
        .paginate(vec![1])
        .unwrap();
        assert!(items.is_empty());
        assert_eq!(
            PageParams {
                page: Some(0),
                per_page: None
            }
            .resolve()
            .unwrap_err()
            .param
            .as_deref(),
            Some("page")
        );
        assert_eq!(
            PageParams {
                page: None,
                per_page: Some(101)
            }
            .resolve()
            .unwrap_err()
            .param
            .as_deref(),
            Some("per_page")
        );
    }
}
